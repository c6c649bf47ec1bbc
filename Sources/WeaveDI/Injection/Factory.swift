/// Resolves `T` from the current container on every access; traps with a clear message when `T`
/// is not registered. Register `T` as `.transient` for a new instance each time.
///
///     @Factory var request: RequestBuilder
@propertyWrapper
public struct Factory<T>: Sendable {
    @inlinable
    public init() {}

    @inlinable
    public var wrappedValue: T {
        Container.withCurrent { $0.requireResolve(T.self) }
    }
}
