import Synchronization
import WeaveSupport

/// The value a property wrapper resolved on first access, kept for later accesses: one allocation
/// per wrapper, published with an atomic rather than a mutex. The wrappers resolve in their own
/// (inlinable, so specialized) getters and hand the value to `keep`; a `nil` is never kept, so a
/// later access can find a service registered since.
@usableFromInline
final class LazyValue<Value>: @unchecked Sendable {
    // @unchecked: `value` is written once, by the thread that moves `state` from 0 to 1, and read
    // only after `state` is 2 (its releasing store orders the write before the reads).
    /// 0: nothing kept; 1: being kept; 2: kept.
    @usableFromInline let state = Atomic<UInt8>(0)
    @usableFromInline var value: Value?

    @inlinable init() {}

    /// The kept value, if any.
    @inlinable @inline(__always)
    var kept: Value? {
        state.load(ordering: .acquiring) == 2 ? value : nil
    }

    /// Keeps `resolved` unless another thread kept its value first; returns the kept value.
    @inlinable
    func keep(_ resolved: Value) -> Value {
        if state.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            value = resolved
            state.store(2, ordering: .releasing)
            return resolved
        }
        return waitForKept()
    }

    /// Another thread is keeping its value this instant (a store, no user code): the wrapper yields
    /// one value, so wait for it.
    @usableFromInline
    func waitForKept() -> Value {
        while state.load(ordering: .acquiring) != 2 { sched_yield() }
        return value!
    }
}
