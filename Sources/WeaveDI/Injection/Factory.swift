/// Resolves `T` from the current container on every access; traps with a clear message when `T`
/// is not registered. Register `T` as `.transient` for a new instance each time.
///
///     @Factory var request: RequestBuilder
///     @Factory(\.requestBuilder) var request: RequestBuilder   // through a `Container` key path
@propertyWrapper
public struct Factory<T>: Sendable {
    @usableFromInline let keyPath: (KeyPath<Container, T?> & Sendable)?

    @inlinable
    public init() {
        keyPath = nil
    }

    /// Reads `keyPath` of the current container on every access (`extension WeaveDI.Container {
    /// var requestBuilder: RequestBuilder? { resolve(RequestBuilder.self) } }`).
    @inlinable
    public init(_ keyPath: KeyPath<Container, T?> & Sendable) {
        self.keyPath = keyPath
    }

    @inlinable
    public var wrappedValue: T {
        guard let keyPath else { return Self.resolveCurrent() }
        guard let value = Container.withCurrent({ $0[keyPath: keyPath] }) else {
            return Self.resolveCurrent() // traps, naming T and near names
        }
        return value
    }

    /// `T` from the current container; traps with `requireResolve`'s diagnostic when it is missing.
    @inlinable @inline(__always)
    static func resolveCurrent() -> T {
        Container.withCurrent { $0.requireResolve(T.self) }
    }

    /// The read of a wrapper in a class, without copying the wrapper out of the object first.
    @inlinable
    public static subscript<Holder: AnyObject>(
        _enclosingInstance holder: Holder,
        wrapped _: KeyPath<Holder, T>,
        storage wrapper: ReferenceWritableKeyPath<Holder, Self>
    ) -> T {
        // Always inlined: the key path is then a constant the optimizer turns into a field load.
        @inline(__always) get {
            if holder[keyPath: wrapper].keyPath == nil { return resolveCurrent() }
            return holder[keyPath: wrapper].wrappedValue
        }
    }
}
