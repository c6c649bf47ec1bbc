import Dependencies
import WeaveDI

// An `InjectedKey` becomes a swift-dependencies key with one line, as upstream WeaveDI documents:
//
//     extension ExchangeUseCaseKey: DependencyKey {}
//
// Both protocols default `testValue` and `previewValue`; these defaults, more specific than either,
// settle which one applies: WeaveDI's, so `@Dependency` and `@Injected` read the same value in
// tests (the key's `testValue` if it has one, else its `liveValue`).
extension DependencyKey where Self: InjectedKey {
    /// The key's `liveValue`, as `InjectedKey` defaults it.
    public static var testValue: Value { liveValue }
    /// The key's `liveValue`, as `InjectedKey` defaults it.
    public static var previewValue: Value { liveValue }
}
