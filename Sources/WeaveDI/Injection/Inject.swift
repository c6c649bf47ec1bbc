/// Resolves `T` from the current container on first access; `nil` while it is not registered.
///
///     @Inject var repository: UserRepository?
@propertyWrapper
public struct Inject<T>: Sendable {
    @usableFromInline let name: String?
    @usableFromInline let storage: LazyValue<T?>
    @usableFromInline let unretained: UnretainedLazyValue<T?>

    /// Resolves the type's default registration.
    @inlinable
    public init() {
        name = nil
        storage = LazyValue() // here, not as the property's initial value: an inlinable init is specialized
        unretained = UnretainedLazyValue(storage)
    }

    /// Resolves the registration named `name`.
    @inlinable
    public init(_ name: String) {
        self.name = name
        storage = LazyValue()
        unretained = UnretainedLazyValue(storage)
    }

    @inlinable
    public var wrappedValue: T? {
        if let kept = storage.kept { return kept }
        return Self.firstRead(storage, name: name)
    }

    /// The first access (or one that found nothing): resolves, and keeps what it found. Out of
    /// line, so the kept value's read stays small where it is inlined.
    @inlinable @inline(never)
    static func firstRead(_ storage: LazyValue<T?>, name: String?) -> T? {
        let resolved = Container.withCurrent { container in
            if let name { return container.resolve(name, T.self) }
            return container.resolve(T.self)
        }
        guard let resolved else { return nil }
        return storage.keep(resolved)
    }

    /// The read of a wrapper in a class: its kept value without copying the wrapper (see
    /// `UnretainedLazyValue`), else the first access, given the wrapper's fields in place (a copy
    /// of the wrapper retained and released its `LazyValue`).
    @inlinable
    public static subscript<Holder: AnyObject>(
        _enclosingInstance holder: Holder,
        wrapped _: KeyPath<Holder, T?>,
        storage wrapper: ReferenceWritableKeyPath<Holder, Self>
    ) -> T? {
        // Always inlined: the key path is then a constant the optimizer turns into a field load.
        @inline(__always) get {
            let unretained = holder[keyPath: wrapper].unretained
            if let kept = unretained.kept { return kept }
            return unretained.box._withUnsafeGuaranteedRef { firstRead($0, name: holder[keyPath: wrapper].name) }
        }
    }
}
