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
}

extension InjectedKey {
    public static var testValue: Value { liveValue }
    public static var previewValue: Value { liveValue }
}
