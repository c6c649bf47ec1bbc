/// The container's key → registration map. Unnamed keys, the hot case, live in an open-addressed
/// table probed by a multiplicative hash of the type's identity; named keys in a dictionary.
struct RegistryTable {
    private var slots: ContiguousArray<AnyRegistration?> = ContiguousArray(repeating: nil, count: 16)
    private var unnamedCount = 0
    private var named: [RegistrationKey: AnyRegistration] = [:]

    @inline(__always)
    private func slotIndex(_ id: ObjectIdentifier, mask: Int) -> Int {
        let bits = UInt(bitPattern: Int(bitPattern: id)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: bits >> 32) & mask
    }

    /// The registration of the type's default (unnamed) key.
    @inline(__always)
    func lookup(_ id: ObjectIdentifier) -> AnyRegistration? {
        let mask = slots.count - 1
        var index = slotIndex(id, mask: mask)
        while let registration = slots[index] {
            if registration.key.typeID == id { return registration }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The registration of any key, named or not.
    func lookup(_ key: RegistrationKey) -> AnyRegistration? {
        key.name == nil ? lookup(key.typeID) : named[key]
    }

    /// Stores `registration`, returning the one it replaces.
    @discardableResult
    mutating func insert(_ registration: AnyRegistration) -> AnyRegistration? {
        if registration.key.name != nil {
            return named.updateValue(registration, forKey: registration.key)
        }
        if (unnamedCount + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var index = slotIndex(registration.key.typeID, mask: mask)
        while let existing = slots[index] {
            if existing.key.typeID == registration.key.typeID {
                slots[index] = registration
                return existing
            }
            index = (index + 1) & mask
        }
        slots[index] = registration
        unnamedCount += 1
        return nil
    }

    /// Every registration, in no particular order.
    var all: [AnyRegistration] {
        slots.compactMap { $0 } + named.values
    }

    private mutating func grow() {
        let old = slots
        slots = ContiguousArray(repeating: nil, count: old.count * 2)
        unnamedCount = 0
        for case let registration? in old { insert(registration) }
    }
}
