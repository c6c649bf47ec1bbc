/// The container's key → registration map. Unnamed keys, the hot case, live in an open-addressed
/// table probed by a multiplicative hash of the type's identity; named keys in a dictionary.
///
/// Guarded by the container's `ShardedLock`: read under one shard, written under all.
@usableFromInline
final class RegistryTable: @unchecked Sendable {
    // @unchecked: see above. The unnamed table sits behind a pointer so that the hot path pays no
    // dynamic exclusivity check and no reference counting.
    @usableFromInline let unnamed: UnsafeMutablePointer<SlotTable>
    private var named: [RegistrationKey: AnyRegistration] = [:]

    init() {
        unnamed = .allocate(capacity: 1)
        unnamed.initialize(to: SlotTable(capacity: 16))
    }

    deinit {
        _ = unnamed.pointee.removeAll()
        unnamed.pointee.deallocate()
        unnamed.deallocate()
    }

    /// The registration of any key, named or not.
    func lookup(_ key: RegistrationKey) -> AnyRegistration? {
        key.name == nil ? unnamed.pointee.lookup(key.typeID)?.takeUnretainedValue() : named[key]
    }

    /// Stores `registration`, returning the one it replaces (for the caller to drop outside the lock).
    func insert(_ registration: AnyRegistration) -> AnyRegistration? {
        if registration.key.name != nil {
            return named.updateValue(registration, forKey: registration.key)
        }
        return unnamed.pointee.insert(registration)
    }

    /// Every registration, in no particular order.
    var all: [AnyRegistration] {
        unnamed.pointee.all + named.values
    }

    /// Empties the table, returning what it held (for the caller to drop outside the lock).
    func removeAll() -> [AnyRegistration] {
        defer { named.removeAll() }
        return unnamed.pointee.removeAll() + named.values
    }
}

/// An open-addressed table of retained registrations keyed by type identity, linear probing.
@usableFromInline
struct SlotTable {
    @usableFromInline var slots: UnsafeMutablePointer<Unmanaged<AnyRegistration>?>
    @usableFromInline var mask: Int
    private var count = 0

    init(capacity: Int) {
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
        mask = capacity - 1
    }

    @inlinable @inline(__always)
    static func slotIndex(_ id: ObjectIdentifier, mask: Int) -> Int {
        let bits = UInt(bitPattern: Int(bitPattern: id)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: bits >> 32) & mask
    }

    /// The registration for the type, unretained (the table keeps it alive while the lock is held).
    @inlinable @inline(__always)
    func lookup(_ id: ObjectIdentifier) -> Unmanaged<AnyRegistration>? {
        var index = Self.slotIndex(id, mask: mask)
        while let registration = slots[index] {
            if registration._withUnsafeGuaranteedRef({ $0.typeID }) == id { return registration }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Stores `registration` (retained), returning the one it replaces.
    mutating func insert(_ registration: AnyRegistration) -> AnyRegistration? {
        if (count + 1) * 2 > mask + 1 { grow() }
        var index = Self.slotIndex(registration.typeID, mask: mask)
        while let existing = slots[index] {
            if existing._withUnsafeGuaranteedRef({ $0.typeID }) == registration.typeID {
                slots[index] = .passRetained(registration)
                return existing.takeRetainedValue()
            }
            index = (index + 1) & mask
        }
        slots[index] = .passRetained(registration)
        count += 1
        return nil
    }

    var all: [AnyRegistration] {
        (0...mask).compactMap { slots[$0]?.takeUnretainedValue() }
    }

    /// Empties the table, handing back ownership of what it held.
    mutating func removeAll() -> [AnyRegistration] {
        var removed: [AnyRegistration] = []
        for index in 0...mask {
            if let registration = slots[index] { removed.append(registration.takeRetainedValue()) }
            slots[index] = nil
        }
        count = 0
        return removed
    }

    func deallocate() {
        slots.deallocate()
    }

    private mutating func grow() {
        let old = slots
        let oldCapacity = mask + 1
        slots = .allocate(capacity: oldCapacity * 2)
        slots.initialize(repeating: nil, count: oldCapacity * 2)
        mask = oldCapacity * 2 - 1
        for index in 0..<oldCapacity {
            guard let registration = old[index] else { continue }
            var slot = Self.slotIndex(registration._withUnsafeGuaranteedRef { $0.typeID }, mask: mask)
            while slots[slot] != nil { slot = (slot + 1) & mask }
            slots[slot] = registration
        }
        old.deallocate()
    }
}
