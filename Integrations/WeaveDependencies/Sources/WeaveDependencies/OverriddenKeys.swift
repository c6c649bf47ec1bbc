import Synchronization

/// The `InjectedKey`s that some `withDependencies` scope has overridden through the bridge. Until a
/// key is, its reads skip swift-dependencies' lookup of an override (a lock and a cache probe: about
/// a microsecond, where a container resolve takes tens of nanoseconds).
///
/// Readers take no lock: the identities are an immutable list (a count, then the identities) that a
/// writer replaces whole under a mutex and publishes with one atomic store. Replaced lists are never
/// freed, as a reader may still be scanning one; a key is added once, so there are as many lists as
/// overridden keys, which a process has few of.
@usableFromInline
final class OverriddenKeys: Sendable {
    @usableFromInline static let shared = OverriddenKeys()

    /// The current list's address, 0 while no key has been overridden.
    private let published = Atomic<UInt>(0)
    private let writer = Mutex<Void>(())

    /// Whether `key` has ever been overridden through the bridge.
    @usableFromInline func contains(_ key: Any.Type) -> Bool {
        let address = published.load(ordering: .acquiring)
        guard address != 0, let list = UnsafePointer<UInt>(bitPattern: address) else { return false }
        let id = UInt(bitPattern: ObjectIdentifier(key))
        for index in 0..<Int(list[0]) where list[index + 1] == id { return true }
        return false
    }

    /// Notes that `key` is being overridden (before the override is stored, so a reader that sees
    /// the override also finds the key here).
    @usableFromInline func insert(_ key: Any.Type) {
        guard !contains(key) else { return }
        writer.withLock { _ in
            guard !contains(key) else { return }
            let old = UnsafePointer<UInt>(bitPattern: published.load(ordering: .relaxed))
            let count = Int(old?[0] ?? 0)
            let list = UnsafeMutablePointer<UInt>.allocate(capacity: count + 2)
            list[0] = UInt(count + 1)
            if let old { (list + 1).update(from: old + 1, count: count) }
            list[count + 1] = UInt(bitPattern: ObjectIdentifier(key))
            published.store(UInt(bitPattern: list), ordering: .releasing)
        }
    }
}
