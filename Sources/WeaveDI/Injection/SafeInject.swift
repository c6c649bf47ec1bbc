/// Like `@Inject`, for code that wants a thrown error rather than a silent `nil`:
///
///     @SafeInject var store: Store?
///     let value = try store.getValue()   // throws ResolutionError.notRegistered naming Store
@propertyWrapper
public struct SafeInject<T>: Sendable {
    /// The same lazy, kept resolve as `@Inject` of the unnamed registration.
    @usableFromInline let inject: Inject<T>

    @inlinable
    public init() {
        inject = Inject()
    }

    @inlinable
    public var wrappedValue: T? { inject.wrappedValue }

    /// The read of a wrapper in a class: its kept value without copying the wrapper (see
    /// `UnretainedLazyValue`), else the first access.
    @inlinable
    public static subscript<Holder: AnyObject>(
        _enclosingInstance holder: Holder,
        wrapped _: KeyPath<Holder, T?>,
        storage wrapper: ReferenceWritableKeyPath<Holder, Self>
    ) -> T? {
        // Always inlined: the key path is then a constant the optimizer turns into a field load.
        @inline(__always) get {
            if let kept = holder[keyPath: wrapper].inject.unretained.kept { return kept }
            return holder[keyPath: wrapper].wrappedValue
        }
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
