
/// The values reached through `InjectedKey`s. Extend it with computed properties:
///
///     extension InjectedValues {
///         var clock: any Clock<Duration> {
///             get { self[ClockKey.self] }
///             set { self[ClockKey.self] = newValue }
///         }
///     }
public struct InjectedValues: Sendable {
    private var overrides: [ObjectIdentifier: any Sendable] = [:]

    public init() {}

    /// The value for `key`: an override set in this task, else the key's default for the execution context.
    public subscript<K: InjectedKey>(key: K.Type) -> K.Value {
        get {
            if let value = overrides[ObjectIdentifier(key)] as? K.Value { return value }
            return InjectedValues.defaultValue(for: key)
        }
        set { overrides[ObjectIdentifier(key)] = newValue }
    }

    /// The values in effect for the current task.
    public static var current: InjectedValues { taskValues }

    @TaskLocal static var taskValues = InjectedValues()

    private static let defaults = Locked<[ObjectIdentifier: any Sendable]>([:])

    /// A key's `liveValue` or `testValue`, computed once per process and then reused.
    private static func defaultValue<K: InjectedKey>(for key: K.Type) -> K.Value {
        if let cached = defaults.withLock({ $0[ObjectIdentifier(key)] }) as? K.Value { return cached }
        let value = ExecutionContext.current == .test ? K.testValue : K.liveValue
        return defaults.withLock { cache in
            if let raced = cache[ObjectIdentifier(key)] as? K.Value { return raced }
            cache[ObjectIdentifier(key)] = value
            return value
        }
    }
}

/// Runs `operation` with the values `update` sets, for this task and the tasks it creates.
public func withInjectedValues<R>(
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    var values = InjectedValues.taskValues
    try update(&values)
    return try await InjectedValues.$taskValues.withValue(values, operation: operation, isolation: isolation)
}

/// Runs `operation` synchronously with the values `update` sets.
public func withInjectedValues<R>(_ update: (inout InjectedValues) throws -> Void, operation: () throws -> R) rethrows -> R {
    var values = InjectedValues.taskValues
    try update(&values)
    return try InjectedValues.$taskValues.withValue(values, operation: operation)
}
