/// The bridge from containers to `InjectedValues`: a key whose value type is registered (without a
/// name) in the current container reads that registration, so the hybrid pattern works, register
/// in the container and read through `@Injected(\.key)`. Keys whose value type no container ever
/// registered skip the container after one lock-free probe.
enum ContainerValues {
    /// Every type some container registered without a name (never removed: a probe that finds one
    /// then asks the current container, which knows whether it still has it).
    private static let registeredTypes = InsertOnlyMap(capacity: 256)
    /// Notes that `type` was registered without a name in some container.
    static func noteRegistration(of type: Any.Type) {
        _ = registeredTypes.findOrInsert(UInt(bitPattern: ObjectIdentifier(type))) { UnsafeRawPointer(bitPattern: 1)! } // only nonnull matters
    }

    /// The current container's registration of `Value` (here or in an ancestor), resolved, or nil
    /// when it has none: a miss is not counted as a resolution error, as the key's default answers.
    static func value<Value>(_ type: Value.Type) -> Value? {
        guard isRegisteredSomewhere(type) else { return nil }
        return Container.withCurrent { container in container.isRegistered(type) ? container.resolve(type) : nil }
    }

    static func isRegisteredSomewhere(_ type: Any.Type) -> Bool {
        registeredTypes.find(UInt(bitPattern: ObjectIdentifier(type))) != nil
    }
}

extension Container {
    /// Whether `type` (under `name`) is registered here or in an ancestor; counts nothing.
    public func isRegistered<T>(_ type: T.Type, name: String? = nil) -> Bool {
        let key = RegistrationKey(type, name: name)
        var container: Container? = self
        while let current = container {
            if current.lock.withReadLock({ _ in current.table.lookup(key) != nil }) { return true }
            container = current.parent
        }
        return false
    }
}
