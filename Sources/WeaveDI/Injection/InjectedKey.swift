/// A dependency with a default, reached through `InjectedValues` (like swift-dependencies' `DependencyKey`).
public protocol InjectedKey {
    associatedtype Value: Sendable
    /// The value used in production.
    static var liveValue: Value { get }
    /// The value used under `swift test` or `WEAVEDI_CONTEXT=test`; defaults to `liveValue`.
    static var testValue: Value { get }
    /// Upstream's value for SwiftUI previews; defaults to `liveValue`. Linux has no previews, so it
    /// is never chosen here: it exists so that keys written for upstream compile unchanged.
    static var previewValue: Value { get }
    /// The registration in `container` that answers for this key, resolved, or nil: the library's
    /// defaults below choose it (keys do not declare it). Chosen when the key conforms, so an
    /// optional-valued key costs no dynamic cast at each read.
    static func registeredValue(in container: Container) -> Value?
}

extension InjectedKey {
    public static var testValue: Value { liveValue }
    public static var previewValue: Value { liveValue }

    /// The registration of `Value` (unnamed, here or in an ancestor); a miss is not an error.
    @inlinable
    public static func registeredValue(in container: Container) -> Value? {
        container.resolveQuietly(Value.self)
    }
}

extension InjectedKey where Value: InjectableOptional {
    /// A key whose value is optional (`static var liveValue: Service? { nil }`) reads the
    /// registration of the wrapped type, `Service`, as upstream's keys do.
    @inlinable
    public static func registeredValue(in container: Container) -> Value? {
        container.resolveQuietly(Value.self) ?? Value.registeredWrapped(in: container)
    }
}
