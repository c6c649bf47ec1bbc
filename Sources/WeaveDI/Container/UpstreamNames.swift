/// Names upstream WeaveDI's documentation uses, mapped onto this container's API (see the README's
/// "Porting from WeaveDI" table). Each is a thin spelling of an existing operation.
extension Container {
    /// The live container (`Container.live`), under upstream's name.
    public static var shared: Container { live }

    /// A new container that falls back to this one for keys it does not hold, with its settings.
    public func createChild() -> Container {
        Container(parent: self, instrumented: isInstrumented, settings: instrumentationSettings)
    }

    /// The service registered for `type`, or `defaultValue()` (`resolve(_:default:)`).
    public func resolveOrDefault<T>(_ type: T.Type = T.self, default defaultValue: @autoclosure () -> T) -> T {
        resolve(type) ?? defaultValue()
    }

    /// Registers a factory in the current container, `live` unless a test overrides it (upstream's
    /// static `DIContainer.register`, as `UnifiedDI.register`).
    public static func register<T>(_ type: T.Type = T.self, scope: Scope = .transient, factory: @escaping @Sendable () -> T) {
        current.register(type, scope: scope, factory: factory)
    }

    /// The current container's service for `type`, or `nil` (upstream's static `DIContainer.resolve`).
    public static func resolve<T>(_ type: T.Type = T.self) -> T? {
        withCurrent { $0.resolve(type) }
    }
}

extension UnifiedDI {
    /// Registers `factory` under the type `keyPath` reads: `extension WeaveDI.Container { var
    /// repository: Repository? { resolve(Repository.self) } }`, then `register(\.repository) { … }`.
    public static func register<T>(_ keyPath: KeyPath<Container, T?>, scope: Scope = .transient,
                                   factory: @escaping @Sendable () -> T) {
        Container.current.register(T.self, scope: scope, factory: factory)
    }

    /// What `keyPath` reads from the current container.
    public static func resolve<T>(_ keyPath: KeyPath<Container, T?>) -> T? {
        Container.withCurrent { $0[keyPath: keyPath] }
    }

    /// Registers `factory` when `condition` holds, else `fallback`.
    public static func registerIf<T>(_ type: T.Type = T.self, condition: Bool, scope: Scope = .transient,
                                     factory: @escaping @Sendable () -> T, fallback: @escaping @Sendable () -> T) {
        Container.current.register(type, scope: scope, factory: condition ? factory : fallback)
    }

    /// The service registered for `type`, or `nil`. With `logOnMiss` a miss is counted and logged
    /// as a warning naming near registered names (label `weave.di`), as `resolve` does; without, it
    /// is neither.
    public static func resolve<T>(_ type: T.Type = T.self, logOnMiss: Bool) -> T? {
        logOnMiss ? resolve(type) : Container.withCurrent { $0.resolveQuietly(type) }
    }

    /// Registers an async factory in the current container.
    public static func registerAsync<T>(_ type: T.Type = T.self, scope: Scope = .transient,
                                        factory: @escaping @Sendable () async throws -> T) {
        Container.current.registerAsync(type, scope: scope, factory: factory)
    }

    /// The current container's service for `type`, awaiting an async factory.
    public static func resolveAsync<T>(_ type: T.Type = T.self) async throws(ResolutionError) -> T {
        try await Container.current.resolveAsync(type)
    }

    /// Removes the current container's registration of `type`; returns whether there was one.
    @discardableResult
    public static func release<T>(_ type: T.Type) -> Bool {
        Container.current.release(type)
    }
}

/// Upstream's registry front end. Only `enableOptimization()` is kept, for code that calls it.
public final class UnifiedRegistry: Sendable {
    /// The one registry.
    public static let shared = UnifiedRegistry()

    private init() {}

    /// Does nothing, on purpose: upstream freezes its registry into a lock-free table here. This
    /// container's resolves already take no global lock (a per-thread shard of a reader lock, one
    /// probe, no reference counting of the table), and registrations stay open at any time, so
    /// there is nothing left to freeze. Benchmarks/README.md has the resolve costs.
    public func enableOptimization() {}
}
