/// Resolves lazily on first access: by type from the current container, or through `InjectedValues`.
///
///     @Injected var logger: Logger?                 // like @Inject: nil when not registered
///     @Injected var store: Store                    // required: traps, naming Store, when not registered
///     @Injected(ConsoleLogger.self) var console     // by concrete type: ConsoleLogger?
///     @Injected(\.clock) var clock                  // through an InjectedKey's key path
///     @Injected(ClockKey.self) var clock            // through the InjectedKey itself
@propertyWrapper
public struct Injected<Value>: Sendable {
    /// Set for the inits that read `InjectedValues`; otherwise `fromContainer` resolves.
    @usableFromInline let fromValues: (@Sendable (InjectedValues) -> Value)?
    @usableFromInline let fromContainer: (@Sendable (Container) -> Value)?
    @usableFromInline let storage: LazyValue<Value?>
    @usableFromInline let unretained: UnretainedLazyValue<Value?>

    /// Resolves the wrapped type of the optional property from the current container.
    @inlinable
    public init() where Value: InjectableOptional {
        fromValues = nil
        fromContainer = { Value.resolved(from: $0) }
        storage = LazyValue() // here, not as the property's initial value: an inlinable init is specialized
        unretained = UnretainedLazyValue(storage)
    }

    /// Resolves the property's type from the current container; traps with `requireResolve`'s
    /// diagnostic (the type and near registered names) when it is not registered.
    @inlinable
    public init() {
        fromValues = nil
        fromContainer = { $0.requireResolve(Value.self) }
        storage = LazyValue()
        unretained = UnretainedLazyValue(storage)
    }

    /// Reads `key`'s value from the task's `InjectedValues` (an override, the container's
    /// registration of its value type, or its default), as `init(_:)` with a key path does.
    @inlinable
    public init<K>(_ key: K.Type) where K: InjectedKey & SendableMetatype, K.Value == Value {
        fromValues = { $0[K.self] }
        fromContainer = nil
        storage = LazyValue()
        unretained = UnretainedLazyValue(storage)
    }

    /// Resolves the concrete type `type`; the property is `T?`. Disfavoured, so that
    /// `@Injected(SomeKey.self) var value` without a type reads the key.
    @inlinable @_disfavoredOverload
    public init<T>(_ type: T.Type) where Value == T? {
        fromValues = nil
        fromContainer = { $0.resolve(T.self) }
        storage = LazyValue()
        unretained = UnretainedLazyValue(storage)
    }

    /// Reads `read(InjectedValues.current)`: what a key path literal becomes, `@Injected(\.clock)`,
    /// which then calls the property's getter directly (no key path object is made or applied).
    @inlinable
    public init(_ read: @escaping @Sendable (InjectedValues) -> Value) {
        fromValues = read
        fromContainer = nil
        storage = LazyValue()
        unretained = UnretainedLazyValue(storage)
    }

    /// Reads `keyPath` from the task's `InjectedValues` (a key path held in a variable; a literal
    /// takes `init(_:)` with a function, which is faster).
    @inlinable @_disfavoredOverload
    public init(_ keyPath: KeyPath<InjectedValues, Value> & Sendable) {
        fromValues = { $0[keyPath: keyPath] }
        fromContainer = nil
        storage = LazyValue()
        unretained = UnretainedLazyValue(storage)
    }

    @inlinable
    public var wrappedValue: Value {
        if let kept = storage.kept { return kept }
        return Self.firstRead(storage, fromValues: fromValues, fromContainer: fromContainer)
    }

    /// The first access: reads `fromValues` or resolves `fromContainer`, and keeps it. Out of line,
    /// so the kept value's read stays small where it is inlined.
    @inlinable @inline(never)
    static func firstRead(
        _ storage: LazyValue<Value?>,
        fromValues: (@Sendable (InjectedValues) -> Value)?,
        fromContainer: (@Sendable (Container) -> Value)?
    ) -> Value {
        // `keep` returns the value it was given or another thread's: never nil.
        if let fromValues { return storage.keep(fromValues(InjectedValues.current)).unsafelyUnwrapped }
        return storage.keep(Container.withCurrent(fromContainer.unsafelyUnwrapped)).unsafelyUnwrapped
    }

    /// The read of a wrapper in a class: its kept value without copying the wrapper (see
    /// `UnretainedLazyValue`), else the first access, given the wrapper's fields in place (a copy
    /// of the wrapper retained and released its `LazyValue`).
    @inlinable
    public static subscript<Holder: AnyObject>(
        _enclosingInstance holder: Holder,
        wrapped _: KeyPath<Holder, Value>,
        storage wrapper: ReferenceWritableKeyPath<Holder, Self>
    ) -> Value {
        // Always inlined: the key path is then a constant the optimizer turns into a field load.
        @inline(__always) get {
            let unretained = holder[keyPath: wrapper].unretained
            if let kept = unretained.kept { return kept }
            return unretained.box._withUnsafeGuaranteedRef {
                firstRead($0, fromValues: holder[keyPath: wrapper].fromValues, fromContainer: holder[keyPath: wrapper].fromContainer)
            }
        }
    }
}

/// An optional whose wrapped type `@Injected var x: T?` resolves; only `Optional` conforms.
public protocol InjectableOptional: SendableMetatype {
    /// The wrapped type resolved from `container`, or `nil`.
    static func resolved(from container: Container) -> Self
    /// The wrapped type's registration in `container`, resolved, as `Self`; nil when there is none
    /// (a miss not counted as an error), for keys whose value is optional.
    static func registeredWrapped(in container: Container) -> Self?
}

extension Optional: InjectableOptional {
    @inlinable
    public static func resolved(from container: Container) -> Self {
        container.resolve(Wrapped.self)
    }

    public static func registeredWrapped(in container: Container) -> Self? {
        container.resolveQuietly(Wrapped.self).map { .some($0) }
    }
}
