import WeaveSupport

/// The label names of one line read so far, for `ExpositionParser` to find one given twice: compared
/// with each other while there are few, then through a hash table at most half full (a line has at
/// most `ParseLimits.labels` names), so that a line of many labels is checked in linear time.
struct LabelTable {
    /// The number of names from which the table is used.
    static let from = 8
    /// Each slot's name, as its index in the line's names plus one; 0 is empty.
    private var slots: [Int16]
    private let mask: Int
    /// The slots in use, to clear them for the next line.
    private var used: [Int] = []

    /// A table for lines of at most `limit` names (at most `Int16.max`).
    init(limit: Int) {
        var size = 256
        while size < 2 * limit { size *= 2 }
        slots = [Int16](repeating: 0, count: size)
        mask = size - 1
    }

    mutating func clear() {
        for slot in used { slots[slot] = 0 }
        used.removeAll(keepingCapacity: true)
    }

    /// Adds the name at `start` (`count` bytes) to `names` (the names before it, in the same bytes);
    /// false when one of them is the same.
    mutating func insert(_ start: Int, _ count: Int, _ base: UnsafePointer<UInt8>,
                         _ names: [(start: Int, count: Int, valueStart: Int, valueEnd: Int)]) -> Bool {
        func same(_ other: Int) -> Bool {
            names[other].count == count && memcmp(base + names[other].start, base + start, count) == 0
        }
        if names.count < Self.from {
            for other in names.indices where same(other) { return false }
            if names.count == Self.from - 1 {
                for index in names.indices { place(index, names[index].start, names[index].count, base) }
                place(names.count, start, count, base)
            }
            return true
        }
        var slot = Self.hash(base + start, count) & mask
        while slots[slot] != 0 {
            if same(Int(slots[slot]) - 1) { return false }
            slot = (slot + 1) & mask
        }
        slots[slot] = Int16(names.count + 1)
        used.append(slot)
        return true
    }

    /// Puts name `index` (known distinct) in its slot.
    private mutating func place(_ index: Int, _ start: Int, _ count: Int, _ base: UnsafePointer<UInt8>) {
        var slot = Self.hash(base + start, count) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = Int16(index + 1)
        used.append(slot)
    }

    private static func hash(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for index in 0..<count { hash = (hash ^ UInt64(bytes[index])) &* 0x0000_0100_0000_01B3 }
        return Int(truncatingIfNeeded: hash ^ hash >> 32)
    }
}
