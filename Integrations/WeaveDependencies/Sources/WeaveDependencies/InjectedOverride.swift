import Dependencies
import WeaveDI

/// Where `DependencyValues` keeps a `withDependencies` override of an `InjectedKey`, apart from the
/// key itself: reading the key itself would fall back to swift-dependencies' cached `liveValue`,
/// which cannot be told from an override. Unset, it is nil in every context.
enum InjectedOverride<Key: InjectedKey>: DependencyKey {
    /// An override's value.
    struct Entry: Sendable {
        let value: Key.Value
    }

    static var liveValue: Entry? { nil }
    static var testValue: Entry? { nil }
    static var previewValue: Entry? { nil }
}

/// Answers `InjectedValues` reads with the `withDependencies` overrides in effect: installed the
/// first time an override is set, so a process that never sets one never pays for the lookup.
struct DependencyOverrides: ExternalInjectedValues {
    func value<K: InjectedKey>(for key: K.Type) -> K.Value? {
        DependencyValues._current[InjectedOverride<K>.self]?.value
    }

    /// Installs the source once per process.
    static func install() { _ = installation }

    private static let installation: Void = InjectedValues.installExternalValues(DependencyOverrides())
}
