/// A static front end over `Container.current` (the task's override, else `Container.live`).
public enum UnifiedDI {
    /// Registers a factory for `type` in the current container.
    public static func register<T>(_ type: T.Type = T.self, scope: Scope = .transient, factory: @escaping @Sendable () -> T) {
        Container.current.register(type, scope: scope, factory: factory)
    }

    /// Registers a factory that may throw: resolve it with `resolveThrows` (a throw is
    /// `ResolutionError.factoryFailed`, counted and logged as a resolution error), or with
    /// `resolve`, which gives `nil`.
    @_disfavoredOverload
    public static func register<T>(_ type: T.Type = T.self, scope: Scope = .transient, factory: @escaping @Sendable () throws -> T) {
        Container.current.register(type, scope: scope, throwingFactory: factory)
    }

    /// Registers an async factory that may throw: resolve it with `try await resolveAsync`.
    @_disfavoredOverload
    public static func register<T>(_ type: T.Type = T.self, scope: Scope = .transient,
                                   factory: @escaping @Sendable () async throws -> T) {
        Container.current.register(type, scope: scope, factory: factory)
    }

    /// Registers a factory for `type` under `name` in the current container.
    public static func register<T>(_ name: String, _ type: T.Type = T.self, scope: Scope = .transient, factory: @escaping @Sendable () -> T) {
        Container.current.register(name, type, scope: scope, factory: factory)
    }

    /// Registers an instance (a singleton) in the current container.
    public static func register<T>(_ type: T.Type = T.self, instance: T) {
        Container.current.register(type, instance: instance)
    }

    /// The service registered for `type`, or `nil`.
    @inlinable
    public static func resolve<T>(_ type: T.Type = T.self) -> T? {
        Container.withCurrent { $0.resolve(type) }
    }

    /// The service registered for `type` under `name`, or `nil`.
    @inlinable
    public static func resolve<T>(_ name: String, _ type: T.Type = T.self) -> T? {
        Container.withCurrent { $0.resolve(name, type) }
    }

    /// The service registered for `type`, or `defaultValue()`.
    @inlinable
    public static func resolve<T>(_ type: T.Type = T.self, default defaultValue: @autoclosure () -> T) -> T {
        resolve(type) ?? defaultValue()
    }

    /// The service registered for `type`; traps with a diagnostic otherwise.
    @inlinable
    public static func requireResolve<T>(_ type: T.Type = T.self) -> T {
        Container.withCurrent { $0.requireResolve(type) }
    }

    /// The service registered for `type`, or a `ResolutionError`.
    @inlinable
    public static func resolveThrows<T>(_ type: T.Type = T.self) throws(ResolutionError) -> T {
        try Container.withCurrent { container in Result { () throws(ResolutionError) in try container.resolveThrows(type) } }.get()
    }

    /// Removes every registration of the current container.
    public static func releaseAll() {
        Container.current.releaseAll()
    }

    /// Chooses which of `Container.live`'s events are logged (`Container.live.instrumentation.logLevel`).
    public static func setLogLevel(_ level: LogLevel) {
        Container.live.instrumentation.logLevel = level
    }

    /// `Container.live`'s log level.
    public static var logLevel: LogLevel { Container.live.instrumentation.logLevel }
}
