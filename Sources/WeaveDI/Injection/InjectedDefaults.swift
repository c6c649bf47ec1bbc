import Synchronization

/// Each `InjectedKey`'s default (`liveValue` or `testValue`), computed once per process and read
/// without a lock: an insert-only open-addressed table of key identities and boxed values, published
/// with atomics. Writers take a mutex; a full table is copied into one twice its size, and the old
/// one stays allocated (readers may still be probing it), which bounds the waste to the final size.
enum InjectedDefaults {
    /// One table: `capacity` key words (0: empty) and as many value pointers (retained boxes).
    final class Table: @unchecked Sendable {
        // @unchecked: slots are atomics.
        let capacity: Int
        let keys: UnsafeMutablePointer<Atomic<UInt>>
        let values: UnsafeMutablePointer<Atomic<UnsafeRawPointer?>>

        init(capacity: Int) {
            self.capacity = capacity
            keys = .allocate(capacity: capacity)
            values = .allocate(capacity: capacity)
            for index in 0..<capacity {
                (keys + index).initialize(to: Atomic(0))
                (values + index).initialize(to: Atomic(nil))
            }
        }

        func slot(_ key: UInt) -> Int {
            Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (capacity - 1)
        }

        /// The box stored for `key`, if any.
        func find(_ key: UInt) -> UnsafeRawPointer? {
            var index = slot(key)
            while true {
                let stored = keys[index].load(ordering: .acquiring)
                if stored == key { return values[index].load(ordering: .acquiring) }
                if stored == 0 { return nil }
                index = (index &+ 1) & (capacity - 1)
            }
        }

        /// Stores `box` (already retained) for `key`, which is not in the table; call holding `writer`.
        func insert(_ key: UInt, _ box: UnsafeRawPointer) {
            var index = slot(key)
            while keys[index].load(ordering: .relaxed) != 0 { index = (index &+ 1) & (capacity - 1) }
            // The value first: a reader that sees the key then sees its value.
            values[index].store(box, ordering: .releasing)
            keys[index].store(key, ordering: .releasing)
        }
    }

    /// The table readers probe: the address of a retained `Table` (an integer, as `Atomic` holds no pointers that are Sendable).
    private static let current = Atomic<UInt>(UInt(bitPattern: Unmanaged.passRetained(Table(capacity: 64)).toOpaque()))

    /// The table readers probe now, unretained: tables are never released.
    private static var currentTable: Unmanaged<Table> {
        Unmanaged<Table>.fromOpaque(UnsafeRawPointer(bitPattern: current.load(ordering: .acquiring))!)
    }
    /// Serialises inserts; holds how many keys the table has.
    private static let writer = Locked(0)

    /// The value in a stored box (boxes are never released, so it is read unretained).
    private static func unbox<Value>(_ box: UnsafeRawPointer) -> Value {
        Unmanaged<InjectedBox<Value>>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.value }
    }

    /// The default of `key` for the execution context, computed on first use.
    static func value<K: InjectedKey>(for key: K.Type) -> K.Value {
        let id = UInt(bitPattern: ObjectIdentifier(key))
        // Unretained and guaranteed: tables and boxes are never released, and reference counting a
        // shared object on every read would make threads contend for its cache line.
        let found = currentTable._withUnsafeGuaranteedRef { $0.find(id) }
        if let found { return unbox(found) }
        // Computed outside the mutex: a key's default may read other keys.
        let value = ExecutionContext.current == .test ? K.testValue : K.liveValue
        return writer.withLock { count in
            var table = currentTable.takeUnretainedValue()
            if let raced = table.find(id) { return unbox(raced) }
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
            table.insert(id, UnsafeRawPointer(Unmanaged.passRetained(InjectedBox(value)).toOpaque()))
            count += 1
            return value
        }
    }
}
