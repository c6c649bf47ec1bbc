/// The container's key → registration map: two open-addressed tables probed by `KeyHash`, one for
/// unnamed keys (the hot case, compared by type identity alone) and one for named keys.
///
/// Guarded by the container's `ShardedLock`: read under one shard, written under all.
@usableFromInline
final class RegistryTable: @unchecked Sendable {
    // @unchecked: see above. The tables sit behind pointers so that the hot path pays no dynamic
    // exclusivity check and no reference counting.
    @usableFromInline let unnamed: UnsafeMutablePointer<SlotTable>
    @usableFromInline let named: UnsafeMutablePointer<SlotTable>
    /// Counts the changes: while it stays, `all` lists the same registrations in the same order.
    private(set) var version: UInt64 = 0

    init() {
        unnamed = .allocate(capacity: 1)
        unnamed.initialize(to: SlotTable(capacity: 16))
        named = .allocate(capacity: 1)
        named.initialize(to: SlotTable(capacity: 16))
    }

    deinit {
        for table in [unnamed, named] {
            _ = table.pointee.removeAll()
            table.pointee.deallocate()
            table.deallocate()
        }
    }

    /// The registration of any key, named or not.
    func lookup(_ key: RegistrationKey) -> AnyRegistration? {
        slot(key.typeID, name: key.name, hash: KeyHash.of(key.typeID, name: key.name))?.takeUnretainedValue()
    }

    /// The registration of the type under `name` (`nil`: its default one), whose `KeyHash` is
    /// `hash` (computed by the caller, outside the lock); unretained.
    @inlinable @inline(__always)
    func slot(_ id: ObjectIdentifier, name: String?, hash: UInt64) -> Unmanaged<AnyRegistration>? {
        guard let name else { return unnamed.pointee.lookup(id) }
        return named.pointee.lookup(id, name: name, hash: hash)
    }

    /// Stores `registration`, returning the one it replaces (for the caller to drop outside the lock).
    func insert(_ registration: AnyRegistration) -> AnyRegistration? {
        version &+= 1
        return (registration.key.name == nil ? unnamed : named).pointee.insert(registration)
    }

    /// Every registration, in no particular order.
    var all: [AnyRegistration] {
        unnamed.pointee.all + named.pointee.all
    }

    /// Empties the table, returning what it held (for the caller to drop outside the lock).
    func removeAll() -> [AnyRegistration] {
        version &+= 1
        return unnamed.pointee.removeAll() + named.pointee.removeAll()
    }

    /// Removes the registration of `key`, returning it (for the caller to drop outside the lock).
    func remove(_ key: RegistrationKey) -> AnyRegistration? {
        version &+= 1
        let table = key.name == nil ? unnamed : named
        // Rare: the rest are put back rather than shifted, which keeps every probe sequence intact.
        var removed: AnyRegistration?
        for registration in table.pointee.removeAll() {
            if registration.key == key { removed = registration } else { _ = table.pointee.insert(registration) }
        }
        return removed
    }
}

/// An open-addressed table of retained registrations filed under their `keyHash`, linear probing.
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
    static func slotIndex(_ hash: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: hash >> 32) & mask
    }

    /// The unnamed registration of the type, unretained (the table keeps it alive while the lock is held).
    @inlinable @inline(__always)
    func lookup(_ id: ObjectIdentifier) -> Unmanaged<AnyRegistration>? {
        var index = Self.slotIndex(KeyHash.of(id), mask: mask)
        while let registration = slots[index] {
            if registration._withUnsafeGuaranteedRef({ $0.typeID }) == id { return registration }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// The registration of the type under `name`, whose `KeyHash` is `hash`; unretained.
    @inlinable @inline(__always)
    func lookup(_ id: ObjectIdentifier, name: String, hash: UInt64) -> Unmanaged<AnyRegistration>? {
        var index = Self.slotIndex(hash, mask: mask)
        while let registration = slots[index] {
            let match = registration._withUnsafeGuaranteedRef { $0.keyHash == hash && $0.typeID == id && $0.key.name == name }
            if match { return registration }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// Stores `registration` (retained), returning the one it replaces.
    mutating func insert(_ registration: AnyRegistration) -> AnyRegistration? {
        if (count + 1) * 2 > mask + 1 { grow() }
        var index = Self.slotIndex(registration.keyHash, mask: mask)
        while let existing = slots[index] {
            if existing._withUnsafeGuaranteedRef({ $0.key == registration.key }) {
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
            var slot = Self.slotIndex(registration._withUnsafeGuaranteedRef { $0.keyHash }, mask: mask)
            while slots[slot] != nil { slot = (slot + 1) & mask }
            slots[slot] = registration
        }
        old.deallocate()
    }
}
