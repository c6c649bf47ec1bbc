public import Synchronization
import WeaveSupport

/// The value a property wrapper resolved on first access, kept for later accesses: one allocation
/// per wrapper, published with an atomic rather than a mutex. The wrappers resolve in their own
/// (inlinable, so specialized) getters and hand the value to `keep`; a `nil` is never kept, so a
/// later access can find a service registered since.
///
/// `Kept` is the optional of the wrapper's value (`LazyValue<T?>`), `nil` until kept: the stored
/// property's type is then the class's own generic argument, which its deinit reads from the
/// object's metadata, where a `Value?` property made every deinit look up `Optional<Value>`'s
/// metadata in the runtime's cache (a tenth of a holder's creation and first read).
@usableFromInline
final class LazyValue<Kept: ExpressibleByNilLiteral>: @unchecked Sendable {
    // @unchecked: `slot` is written once, by the thread that moves `state` from 0 to 1, and read
    // only after `state` is 2 (its releasing store orders the write before the reads).
    /// 0: nothing kept; 1: being kept; 2: kept.
    @usableFromInline let state = Atomic<UInt8>(0)
    @usableFromInline @exclusivity(unchecked) var slot: Kept = nil // ordered by `state`, not by access checks

    @inlinable init() {}

    /// The kept value, or `nil`.
    @inlinable @inline(__always)
    var kept: Kept {
        state.load(ordering: .acquiring) == 2 ? slot : nil
    }

    /// Keeps `resolved` unless another thread kept its value first; returns the kept value.
    @inlinable
    func keep(_ resolved: Kept) -> Kept {
        if state.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            slot = resolved
            state.store(2, ordering: .releasing)
            return resolved
        }
        return waitForKept()
    }

    /// Another thread is keeping its value this instant (a store, no user code): the wrapper yields
    /// one value, so wait for it.
    @usableFromInline
    func waitForKept() -> Kept {
        while state.load(ordering: .acquiring) != 2 { sched_yield() }
        return slot
    }
}

/// A `LazyValue` reached without reference counting, beside the wrapper's owning reference to it.
///
/// A wrapper in a class is read through its `_enclosingInstance` subscript, which loads this
/// field alone; reading the wrapper itself would copy it out of the object, retaining its
/// `LazyValue` on every read, and two threads reading one holder would then contend on that
/// reference count as well as on the kept object's.
@usableFromInline
struct UnretainedLazyValue<Kept: ExpressibleByNilLiteral>: @unchecked Sendable {
    // @unchecked: only read while the wrapper that owns the `LazyValue` is alive (its holder is).
    @usableFromInline let box: Unmanaged<LazyValue<Kept>>

    @inlinable init(_ value: LazyValue<Kept>) {
        box = .passUnretained(value)
    }

    /// The kept value, or `nil`.
    @inlinable @inline(__always)
    var kept: Kept {
        box._withUnsafeGuaranteedRef { $0.kept }
    }
}
