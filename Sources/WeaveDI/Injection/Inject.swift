/// Resolves `T` from the current container on first access; `nil` while it is not registered.
///
///     @Inject var repository: UserRepository?
@propertyWrapper
public struct Inject<T>: Sendable {
    @usableFromInline let name: String?
    @usableFromInline let storage = LazyValue<T>()

    /// Resolves the type's default registration.
    @inlinable
    public init() {
        name = nil
    }

    /// Resolves the registration named `name`.
    @inlinable
    public init(_ name: String) {
        self.name = name
    }

    @inlinable
    public var wrappedValue: T? {
        if let kept = storage.kept { return kept }
        let resolved = Container.withCurrent { container in
            if let name { return container.resolve(name, T.self) }
            return container.resolve(T.self)
        }
        return resolved.map(storage.keep)
    }
}
