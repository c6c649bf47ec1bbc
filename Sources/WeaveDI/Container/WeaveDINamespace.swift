/// The namespace upstream WeaveDI code extends and calls: `extension WeaveDI { static func
/// registerFeatures() … }`, `WeaveDI.register { … }`, `WeaveDI.builder`, `WeaveDI.registerForEnvironment`.
/// `WeaveDI.Container` still names the container.
public enum WeaveDI {
    /// The container class (`Container`, also `DIContainer`).
    public typealias Container = DIContainer

    /// Registers `factory` in the current container under the type it returns: write
    /// `{ UserServiceImpl() as UserService }` to register a protocol.
    public static func register<T>(scope: Scope = .transient, _ factory: @escaping @Sendable () -> T) {
        Container.current.register(T.self, scope: scope, factory: factory)
    }

    /// A chain of registrations added to the current container together by `configure()`.
    public static var builder: Builder { Builder() }

    /// Runs `configure` with the environment, then adds what it registered to the current container
    /// together (as `builder` and `Container.bootstrap` do).
    @discardableResult
    public static func registerForEnvironment(_ configure: (Environment) -> Void) -> [RegistrationKey] {
        let environment = Environment()
        configure(environment)
        return environment.builder.configure()
    }

    /// Registrations chained with `register`, each optionally `scoped`, added by `configure()`.
    public struct Builder: Sendable {
        struct Entry: Sendable {
            var scope: Scope
            let register: @Sendable (Container, Scope) -> Void
        }
        var entries: [Entry] = []

        /// Adds a registration of the type `factory` returns (transient unless `scoped`).
        public func register<T>(_ factory: @escaping @Sendable () -> T) -> Builder {
            var next = self
            next.entries.append(Entry(scope: .transient) { container, scope in container.register(T.self, scope: scope, factory: factory) })
            return next
        }

        /// Sets the scope of the registration added last.
        public func scoped(_ scope: Scope) -> Builder {
            var next = self
            if !next.entries.isEmpty { next.entries[next.entries.count - 1].scope = scope }
            return next
        }

        /// Adds every registration to the current container under one hold of its write lock; one
        /// that replaces an existing registration is logged as a warning and returned.
        @discardableResult
        public func configure() -> [RegistrationKey] {
            let container = Container.current
            let staging = Container.Staging(container: container)
            Container.$staging.withValue(staging) {
                for entry in entries { entry.register(container, entry.scope) }
            }
            return staging.commit()
        }
    }

    /// What `registerForEnvironment` passes: whether this is a debug build or a test run, and the
    /// registrations made through it.
    public final class Environment {
        var builder = Builder()

        init() {}

        /// Whether the caller was compiled with assertions on (a debug build).
        @inlinable public var isDebug: Bool { _isDebugAssertConfiguration() }
        /// Whether this process runs tests (`swift test`, or `WEAVEDI_CONTEXT=test`).
        public var isTest: Bool { ExecutionContext.current == .test }

        /// Registers `factory` under the type it returns.
        public func register<T>(scope: Scope = .transient, _ factory: @escaping @Sendable () -> T) {
            builder = builder.register(factory).scoped(scope)
        }
    }
}
