import CMachine
public import Synchronization
import WeaveSupport

/// A lock whose waiters park in the kernel (a futex) after a bounded spin, so a holder that the
/// scheduler preempted gets a core back instead of competing with spinners; unlocking wakes one
/// waiter. Uncontended, it costs one compare-exchange to lock and a plain store to unlock: the
/// resolve paths lock once or twice per resolve, and each locked instruction also waits for the
/// core's pending stores, such as a contended reference count's.
///
/// Waiters count themselves in a second word, which the unlocker reads after its store. Without a
/// fence between the two (the fence is the cost saved), an unlocker can miss a waiter that is just
/// parking; a parked waiter therefore sleeps at most `parkNanos` before it looks again, which
/// bounds that rare case.
///
/// It does not own its words: they live in memory its owner allocates (see `ShardedLock`), and
/// must stay put while the lock is used. ThreadSanitizer sees every hand-over through the lock
/// word's acquiring compare-exchange and releasing store.
@usableFromInline
struct ParkingLock: @unchecked Sendable {
    // @unchecked: the word is only touched atomically.
    /// 0: unlocked; 1: locked. The word after it counts the threads parked or about to park.
    @usableFromInline let word: UnsafeMutablePointer<Atomic<UInt32>>

    /// A lock over `word` and the word after it, set up with `initializeWords(at:)`.
    @inlinable init(word: UnsafeMutablePointer<Atomic<UInt32>>) {
        self.word = word
    }

    /// How many words a lock uses, from `word` on.
    static let wordCount = 2

    /// Sets up a lock's words at `word` (bound, not yet initialized), unlocked with no waiters.
    static func initializeWords(at word: UnsafeMutablePointer<Atomic<UInt32>>) {
        for index in 0..<wordCount { (word + index).initialize(to: Atomic(0)) }
    }

    /// Tears down the words of a lock no thread uses any more.
    func deinitializeWords() {
        word.deinitialize(count: Self.wordCount)
    }

    /// The threads parked or about to park.
    @inlinable var waiters: UnsafeMutablePointer<Atomic<UInt32>> { word + 1 }

    /// Spins before parking, 50–100 µs: a holder that is running (a reader's few nanoseconds, a
    /// registration's microseconds) releases within it, and a parked waiter, once woken, may wait a
    /// whole time slice for a core on a busy machine. In the oversubscribed benchmark 100 spins left
    /// 1,364 resolves over 1 ms, 1,000 left 106, and 4,000 left 33 (Benchmarks/README.md).
    @usableFromInline static let spins = 4_000

    @inlinable @inline(__always)
    func lock() {
        if word.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
        lockContended()
    }

    @usableFromInline @inline(never)
    func lockContended() {
        for _ in 0..<Self.spins {
            weave_spin_hint()
            if word.pointee.load(ordering: .relaxed) == 0,
               word.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
                return
            }
        }
        // Count this waiter, so the holder's unlock wakes one, then sleep until the lock is free.
        waiters.pointee.add(1, ordering: .relaxed)
        defer { waiters.pointee.subtract(1, ordering: .relaxed) }
        let address = UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self)
        while !word.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            _ = weave_futex_wait(address, 1, Self.parkNanos) // returns at once when the word is no longer 1
        }
    }

    /// The longest a parked waiter sleeps before it tries again, in case its wake-up was missed.
    @usableFromInline static let parkNanos: UInt64 = 200_000

    @inlinable @inline(__always)
    func unlock() {
        word.pointee.store(0, ordering: .releasing)
        if waiters.pointee.load(ordering: .relaxed) != 0 { wakeOne() }
    }

    @usableFromInline @inline(never)
    func wakeOne() {
        _ = weave_futex_wake(UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self), 1)
    }

    /// Runs `body` holding the lock.
    @inlinable @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
