/// The bridge from containers to `InjectedValues`: a key whose value type is registered (without a
/// name) in the current container reads that registration, so the hybrid pattern works, register
/// in the container and read through `@Injected(\.key)`. Keys whose value type no container ever
/// registered skip the container after one lock-free probe.
@usableFromInline
enum ContainerValues {
    /// Every type some container registered without a name (never removed: a probe that finds one
    /// then asks the current container, which knows whether it still has it).
    @usableFromInline static let registeredTypes = InsertOnlyMap(capacity: 256)

    /// Notes that `type` was registered without a name in some container.
    static func noteRegistration(of type: Any.Type) {
        // The value only has to be nonnull.
        _ = registeredTypes.findOrInsert(UInt(bitPattern: ObjectIdentifier(type))) { UnsafeRawPointer(bitPattern: 1)! }
    }

    /// The current container's registration of `Value` (here or in an ancestor), resolved, or nil
    /// when it has none: a miss is not counted as a resolution error, as the key's default answers.
    @inlinable
    static func value<Value>(_ type: Value.Type) -> Value? {
        guard isRegisteredSomewhere(type) else { return nil }
        return Container.withCurrent { $0.resolveQuietly(type) }
    }

    @inlinable
    static func isRegisteredSomewhere(_ type: Any.Type) -> Bool {
        registeredTypes.find(UInt(bitPattern: ObjectIdentifier(type))) != nil
    }
}
