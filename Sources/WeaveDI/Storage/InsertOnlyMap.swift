public import Synchronization
import WeaveSupport

/// A map from nonzero words to nonnull pointers that only grows, read without a lock: an
/// open-addressed table of atomics, published with atomics. Writers take a mutex; a full table is
/// copied into one twice its size, and the old one stays allocated (readers may still be probing
/// it), which bounds the waste to the final size. For process-wide registries of type identities.
@usableFromInline
final class InsertOnlyMap: Sendable {
    /// One table: `capacity` key words (0: empty) and as many value pointers.
    @usableFromInline
    final class Table: @unchecked Sendable {
        // @unchecked: slots are atomics.
        @usableFromInline let capacity: Int
        @usableFromInline let keys: UnsafeMutablePointer<Atomic<UInt>>
        @usableFromInline let values: UnsafeMutablePointer<Atomic<UnsafeRawPointer?>>

        init(capacity: Int) {
            self.capacity = capacity
            keys = .allocate(capacity: capacity)
            values = .allocate(capacity: capacity)
            for index in 0..<capacity {
                (keys + index).initialize(to: Atomic(0))
                (values + index).initialize(to: Atomic(nil))
            }
        }

        @inlinable
        func slot(_ key: UInt) -> Int {
            Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (capacity - 1)
        }

        /// The value stored for `key`, if any.
        @inlinable
        func find(_ key: UInt) -> UnsafeRawPointer? {
            var index = slot(key)
            while true {
                let stored = keys[index].load(ordering: .acquiring)
                if stored == key { return values[index].load(ordering: .acquiring) }
                if stored == 0 { return nil }
                index = (index &+ 1) & (capacity - 1)
            }
        }

        /// Stores `value` for `key`, which is not in the table; call holding the writer's mutex.
        func insert(_ key: UInt, _ value: UnsafeRawPointer) {
            var index = slot(key)
            while keys[index].load(ordering: .relaxed) != 0 { index = (index &+ 1) & (capacity - 1) }
            // The value first: a reader that sees the key then sees its value.
            values[index].store(value, ordering: .releasing)
            keys[index].store(key, ordering: .releasing)
        }
    }

    /// The table readers probe: the address of a retained `Table` (an integer, as `Atomic` holds no
    /// pointers that are Sendable). Tables are never released.
    @usableFromInline let current: Atomic<UInt>
    /// Serialises inserts; holds how many keys the table has.
    private let writer = Locked(0)

    init(capacity: Int = 64) {
        current = Atomic(UInt(bitPattern: Unmanaged.passRetained(Table(capacity: capacity)).toOpaque()))
    }

    /// The table to probe now, unretained and guaranteed: tables are never released, and reference
    /// counting a shared object on every read would make threads contend for its cache line.
    @inlinable
    var table: Unmanaged<Table> {
        Unmanaged<Table>.fromOpaque(UnsafeRawPointer(bitPattern: current.load(ordering: .acquiring))!)
    }

    /// The value stored for `key` (nonzero), if any; no lock.
    @inlinable
    func find(_ key: UInt) -> UnsafeRawPointer? {
        table._withUnsafeGuaranteedRef { $0.find(key) }
    }

    /// The value stored for `key`, storing `make()` first if there is none (`make` runs under the
    /// writer's mutex only when the key is absent; it must not use this map).
    func findOrInsert(_ key: UInt, _ make: () -> UnsafeRawPointer) -> UnsafeRawPointer {
        if let found = find(key) { return found }
        return writer.withLock { count in
            var table = self.table.takeUnretainedValue()
            if let raced = table.find(key) { return raced }
            if (count + 1) * 2 > table.capacity {
                let grown = Table(capacity: table.capacity * 2)
                for index in 0..<table.capacity {
                    let stored = table.keys[index].load(ordering: .relaxed)
                    if stored != 0 { grown.insert(stored, table.values[index].load(ordering: .relaxed)!) }
                }
                // The old table is never released: a reader may be probing it.
                current.store(UInt(bitPattern: Unmanaged.passRetained(grown).toOpaque()), ordering: .releasing)
                table = grown
            }
            let value = make()
            table.insert(key, value)
            count += 1
            return value
        }
    }
}
