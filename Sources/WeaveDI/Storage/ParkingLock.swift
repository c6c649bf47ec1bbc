import CMachine
import Synchronization

/// A lock whose waiters park in the kernel (a futex) after a bounded spin, so a holder that the
/// scheduler preempted gets a core back instead of competing with spinners; unlocking wakes one
/// waiter. Uncontended, it costs one compare-exchange to lock and one exchange to unlock.
///
/// It does not own its word: the word lives in memory its owner allocates (see `ShardedLock`),
/// and must stay put while the lock is used. ThreadSanitizer sees every hand-over through the
/// word's acquiring and releasing atomics.
@usableFromInline
struct ParkingLock: @unchecked Sendable {
    // @unchecked: the word is only touched atomically.
    /// 0: unlocked; 1: locked; 2: locked, and a waiter may be parked.
    @usableFromInline let word: UnsafeMutablePointer<Atomic<UInt32>>

    /// A lock over `word`, which the caller has initialized to `Atomic(0)`.
    @inlinable init(word: UnsafeMutablePointer<Atomic<UInt32>>) {
        self.word = word
    }

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
        // Mark the lock contended, so the holder's unlock wakes a waiter, then sleep until it is free.
        let address = UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self)
        while word.pointee.exchange(2, ordering: .acquiring) != 0 {
            _ = weave_futex_wait(address, 2, 0)
        }
    }

    @inlinable @inline(__always)
    func unlock() {
        if word.pointee.exchange(0, ordering: .releasing) == 2 { wakeOne() }
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
