public import Synchronization

/// The values reached through `InjectedKey`s. Extend it with computed properties:
///
///     extension InjectedValues {
///         var clock: any Clock<Duration> {
///             get { self[ClockKey.self] }
///             set { self[ClockKey.self] = newValue }
///         }
///     }
public struct InjectedValues: Sendable {
    /// The values set in this task, by key identity: few, so a linear scan beats hashing. Nil
    /// rather than empty until one is set, so the values most reads make (none set) hold no
    /// reference to retain and release.
    @usableFromInline var overrides: [(key: ObjectIdentifier, box: AnyObject & Sendable)]? = nil

    @inlinable public init() {}

    /// The value for `key`: an override set in this task, else one that another dependency system
    /// sets (`ExternalInjectedValues`, such as swift-dependencies' `withDependencies` through the
    /// WeaveDependencies bridge), else the current container's registration of the key's value type
    /// (unnamed, here or in an ancestor), else the key's default for the execution context
    /// (`liveValue`, or `testValue` under tests).
    public subscript<K: InjectedKey>(key: K.Type) -> K.Value {
        // Inlinable, so the container's resolve is specialized for the value type at the caller.
        @inlinable @inline(__always) get { value(for: key) { ExternalValuesBox.value(for: key) } }
        set {
            let id = ObjectIdentifier(key)
            let box = InjectedBox(newValue)
            var entries = overrides.take() ?? [] // taken, so the array stays unique and is edited in place
            if let index = entries.firstIndex(where: { $0.key == id }) {
                entries[index].box = box
            } else {
                entries.append((id, box))
            }
            overrides = entries
        }
    }

    /// The value for `key` as the subscript reads it, with `external` asked in place of the installed
    /// `ExternalInjectedValues`: for a bridge that reads the other system's values it already holds.
    @inlinable @inline(__always)
    public func value<K: InjectedKey>(for key: K.Type, external: () -> K.Value?) -> K.Value {
        let id = ObjectIdentifier(key)
        if let overrides {
            for entry in overrides where entry.key == id {
                // Safe: the box under `K`'s identity was made by the subscript's setter for `K`.
                return unsafeDowncast(entry.box, to: InjectedBox<K.Value>.self).value
            }
        }
        if let set = external() { return set }
        if let registered = ContainerValues.value(for: key) { return registered }
        return InjectedDefaults.value(for: key)
    }

    /// The values in effect for the current task. Until some task sets values
    /// (`withInjectedValues`), none has any, and this skips the task-local read.
    @inlinable
    public static var current: InjectedValues {
        resolverFlags.injectedValuesSet.load(ordering: .relaxed) ? boundTaskValues() ?? InjectedValues() : InjectedValues()
    }

    /// The values set in this task, if any (`taskValues` without `TaskLocal.get()`'s generic copy).
    @usableFromInline
    static func boundTaskValues() -> InjectedValues? { $taskValues.boundValue() }

    @usableFromInline @TaskLocal static var taskValues = InjectedValues()
}


/// An `InjectedKey`'s value, boxed so a reader downcasts it instead of casting dynamically.
@usableFromInline
final class InjectedBox<Value>: @unchecked Sendable {
    // @unchecked: immutable; an `InjectedKey`'s value is Sendable.
    @usableFromInline let value: Value
    @usableFromInline init(_ value: Value) { self.value = value }
}

/// Runs `operation` with the values `update` sets, for this task and the tasks it creates.
public func withInjectedValues<R>(
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    resolverFlags.injectedValuesSet.store(true, ordering: .relaxed)
    var values = InjectedValues.taskValues
    try update(&values)
    return try await InjectedValues.$taskValues.withValue(values, operation: operation, isolation: isolation)
}

/// Runs `operation` synchronously with the values `update` sets.
public func withInjectedValues<R>(_ update: (inout InjectedValues) throws -> Void, operation: () throws -> R) rethrows -> R {
    resolverFlags.injectedValuesSet.store(true, ordering: .relaxed)
    var values = InjectedValues.taskValues
    try update(&values)
    return try InjectedValues.$taskValues.withValue(values, operation: operation)
}
