/// Resolves `T` from the current container on every access; traps with a clear message when `T`
/// is not registered. Register `T` as `.transient` for a new instance each time.
///
///     @Factory var request: RequestBuilder
@propertyWrapper
public struct Factory<T>: Sendable {
    public init() {}

    public var wrappedValue: T {
        Container.current.requireResolve(T.self)
    }
}
