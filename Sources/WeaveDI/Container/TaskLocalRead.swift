/// The runtime's task-local look-up, the one `TaskLocal.get()` makes: the address of the value
/// bound to `key` (a `TaskLocal` object) in the current task or synchronous `withValue` scope, or
/// nil when none is bound.
@usableFromInline @_silgen_name("swift_task_localValueGet")
func taskLocalValueAddress(_ key: UnsafeRawPointer) -> UnsafeMutableRawPointer?

extension TaskLocal {
    /// The value bound in the current task, or nil when none is (so not the default): what `get()`
    /// reads, without its copy through the value's metadata (`get()` is not inlinable, so it runs
    /// unspecialized: a cache look-up of `Optional<Value>`'s metadata and a value-witness copy,
    /// 15–25 ns on every resolve once some task has used `withContainer`).
    @inlinable @inline(__always)
    func boundValue() -> Value? {
        boundAddress?.assumingMemoryBound(to: Value.self).pointee
    }

    /// The object bound in the current task, not retained: valid while the binding's scope lasts,
    /// which is longer than any synchronous use by code running inside it.
    @inlinable @inline(__always)
    func boundObject<Object: AnyObject>() -> Unmanaged<Object>? where Value == Object? {
        boundAddress?.load(as: Unmanaged<Object>?.self)
    }

    /// Where the value bound in the current task is stored, or nil; the key is this object.
    @inlinable @inline(__always)
    var boundAddress: UnsafeMutableRawPointer? {
        taskLocalValueAddress(UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()))
    }
}
