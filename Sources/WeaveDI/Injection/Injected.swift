/// Resolves lazily on first access: by type from the current container, or through `InjectedValues`.
///
///     @Injected var logger: Logger?                 // like @Inject
///     @Injected(ConsoleLogger.self) var console     // by concrete type: ConsoleLogger?
///     @Injected(\.clock) var clock                  // through an InjectedKey
@propertyWrapper
public struct Injected<Value>: Sendable {
    private let storage: LazyResolution<Value>

    /// Resolves the wrapped type of the optional property from the current container.
    public init() where Value: InjectableOptional {
        storage = LazyResolution { container in Value.resolved(from: container) }
    }

    /// Resolves the concrete type `type`; the property is `T?`.
    public init<T>(_ type: T.Type) where Value == T? {
        storage = LazyResolution { container in .some(container.resolve(type)) }
    }

    /// Reads `keyPath` from the task's `InjectedValues`.
    public init(_ keyPath: KeyPath<InjectedValues, Value> & Sendable) {
        storage = LazyResolution { _ in InjectedValues.current[keyPath: keyPath] }
    }

    public var wrappedValue: Value {
        // Every resolver above returns a value (possibly an Optional's nil), so this never traps.
        storage.value()!
    }
}

/// An optional whose wrapped type `@Injected var x: T?` resolves; only `Optional` conforms.
public protocol InjectableOptional: SendableMetatype {
    /// The wrapped type resolved from `container`, or `nil`.
    static func resolved(from container: Container) -> Self
}

extension Optional: InjectableOptional {
    public static func resolved(from container: Container) -> Self {
        container.resolve(Wrapped.self)
    }
}
