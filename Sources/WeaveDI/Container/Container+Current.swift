
private let liveContainer = Locked(Container())

extension Container {
    /// The process-wide container. Replace it, for example in tests, by assigning a new one.
    public static var live: Container {
        get { liveContainer.withLock { $0 } }
        set { liveContainer.withLock { $0 = newValue } }
    }

    /// The container that overrides `live` in the current task, set by `withContainer(_:operation:)`.
    @TaskLocal static var override: Container?

    /// The container property wrappers and `UnifiedDI` use: the task's override if there is one, else `live`.
    public static var current: Container {
        override ?? live
    }

    /// Configures a new container with `configure` and then makes it `live`, so no resolve sees it
    /// half-built. It keeps the instrumentation settings of the container it replaces.
    public static func bootstrap(_ configure: @Sendable (Container) async throws -> Void) async rethrows {
        let container = Container(settings: live.instrumentationSettings)
        try await configure(container)
        live = container
        DILog.log(.registration, .info, "Bootstrapped the live container",
                  metadata: ["registrations": "\(container.registrations.count)"])
    }
}

/// Runs `operation` with `container` as `Container.current` for this task and the tasks it creates;
/// `live` is untouched, so parallel tests stay isolated.
public func withContainer<R>(
    _ container: Container, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> R
) async rethrows -> R {
    try await Container.$override.withValue(container, operation: operation, isolation: isolation)
}

/// Runs `operation` with `container` as `Container.current` on this thread's task context.
public func withContainer<R>(_ container: Container, operation: () throws -> R) rethrows -> R {
    try Container.$override.withValue(container, operation: operation)
}
