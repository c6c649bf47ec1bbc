public import Synchronization

/// Values for `InjectedKey`s that another dependency system sets, such as swift-dependencies'
/// `withDependencies` (the WeaveDependencies bridge installs one). `InjectedValues` asks it after
/// the task's own `withInjectedValues` overrides and before the containers.
public protocol ExternalInjectedValues: Sendable {
    /// The value the other system sets for `key` where the current task reads it, or nil.
    func value<K: InjectedKey>(for key: K.Type) -> K.Value?
}

extension InjectedValues {
    /// Installs `source`: every `InjectedValues` read asks it from now on. A later call replaces it.
    public static func installExternalValues(_ source: some ExternalInjectedValues) {
        // Never released: a reader may hold the previous one unretained, and installations are rare.
        let box = Unmanaged.passRetained(ExternalValuesBox(source))
        resolverFlags.externalValues.store(UInt(bitPattern: box.toOpaque()), ordering: .releasing)
    }
}

/// The installed `ExternalInjectedValues`, read with one atomic load and no reference counting.
@usableFromInline
final class ExternalValuesBox: Sendable {
    @usableFromInline let source: any ExternalInjectedValues

    init(_ source: any ExternalInjectedValues) { self.source = source }

    /// The installed source's value for `key`, or nil (also when none is installed).
    @inlinable @inline(__always)
    static func value<K: InjectedKey>(for key: K.Type) -> K.Value? {
        let address = resolverFlags.externalValues.load(ordering: .acquiring)
        guard address != 0 else { return nil }
        return Unmanaged<ExternalValuesBox>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
            ._withUnsafeGuaranteedRef { $0.source.value(for: key) }
    }
}
