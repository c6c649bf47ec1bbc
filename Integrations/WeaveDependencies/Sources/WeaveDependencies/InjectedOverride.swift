import Dependencies
import WeaveDI

/// Where `DependencyValues` keeps a `withDependencies` override of an `InjectedKey`, apart from the
/// key itself: reading the key itself would fall back to swift-dependencies' cached `liveValue`,
/// which cannot be told from an override. Unset, it is nil in every context.
@usableFromInline
enum InjectedOverride<Key: InjectedKey>: DependencyKey {
    /// An override's value.
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline let value: Key.Value
        @usableFromInline init(value: Key.Value) { self.value = value }
    }

    @usableFromInline static var liveValue: Entry? { nil }
    @usableFromInline static var testValue: Entry? { nil }
    @usableFromInline static var previewValue: Entry? { nil }
}

/// Answers `InjectedValues` reads with the `withDependencies` overrides in effect: installed the
/// first time an override is set, so a process that never sets one never pays for the lookup, and
/// only keys that have been overridden are looked up (`OverriddenKeys`).
@usableFromInline
struct DependencyOverrides: ExternalInjectedValues {
    @usableFromInline func value<K: InjectedKey>(for key: K.Type) -> K.Value? {
        guard OverriddenKeys.shared.contains(key) else { return nil }
        return overriddenValue(for: key)
    }

    /// Out of line: called unspecialized, its generic types' metadata (a runtime cache lookup each
    /// time) is only made for keys that have been overridden.
    @inline(never)
    private func overriddenValue<K: InjectedKey>(for key: K.Type) -> K.Value? {
        DependencyValues._current[InjectedOverride<K>.self]?.value
    }

    /// Installs the source once per process.
    @usableFromInline static func install() { _ = installation }

    private static let installation: Void = InjectedValues.installExternalValues(DependencyOverrides())
}
