/// Like `@Inject`, for code that wants a thrown error rather than a silent `nil`:
///
///     @SafeInject var store: Store?
///     let value = try store.getValue()   // throws ResolutionError.notRegistered naming Store
@propertyWrapper
public struct SafeInject<T>: Sendable {
    @usableFromInline let storage: LazyValue<T>

    @inlinable
    public init() {
        storage = LazyValue() // here, not as the property's initial value: an inlinable init is specialized
    }

    @inlinable
    public var wrappedValue: T? {
        if let kept = storage.kept { return kept }
        guard let resolved = Container.withCurrent({ $0.resolve(T.self) }) else { return nil }
        return storage.keep(resolved)
    }
}

extension Optional {
    /// The wrapped value, or `ResolutionError.notRegistered` naming `Wrapped` and near registered names.
    public func getValue() throws(ResolutionError) -> Wrapped {
        guard let self else {
            throw Container.current.notRegistered(RegistrationKey(Wrapped.self, name: nil))
        }
        return self
    }
}
