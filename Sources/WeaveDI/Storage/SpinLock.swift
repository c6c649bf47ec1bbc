import Synchronization
import WeaveSupport

/// A test-and-test-and-set lock for the reader shards, whose critical sections are a few
/// nanoseconds (a reader) to a few microseconds (a writer) and never run user code. After a short
/// spin it yields the CPU, so a preempted holder does not make others burn their time slice.
///
/// Not `Mutex`: on Linux its contended path is a PI futex in the runtime, whose hand-over
/// ThreadSanitizer cannot see; every operation here is an inlined atomic that it can.
@usableFromInline
struct SpinLock: ~Copyable, Sendable {
    @usableFromInline let state = Atomic<Bool>(false)

    @inlinable init() {}

    @inlinable @inline(__always)
    func lock() {
        if state.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        lockSlow()
    }

    @usableFromInline
    func lockSlow() {
        var spins = 0
        while true {
            while state.load(ordering: .relaxed) {
                spins += 1
                if spins > 64 { sched_yield() }
            }
            if state.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        }
    }

    @inlinable @inline(__always)
    func unlock() {
        state.store(false, ordering: .releasing)
    }

    /// Runs `body` holding the lock.
    @inlinable @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
