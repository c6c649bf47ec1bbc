/// Resolves `T` from the current container on first access; `nil` while it is not registered.
///
///     @Inject var repository: UserRepository?
@propertyWrapper
public struct Inject<T>: Sendable {
    private let storage: LazyResolution<T>

    /// Resolves the type's default registration.
    public init() {
        storage = LazyResolution { $0.resolve(T.self) }
    }

    /// Resolves the registration named `name`.
    public init(_ name: String) {
        storage = LazyResolution { $0.resolve(name, T.self) }
    }

    public var wrappedValue: T? { storage.value() }
}
