import Synchronization

/// The dependency edges a thread has recorded lately, so that a factory that resolves the same
/// dependencies on every run (a transient's) records each edge once per thread, not on every
/// resolve under the container's mutex. Direct-mapped: 64 entries, each the container's edge epoch
/// and the two registrations' serial numbers, which are never reused (an address would be). A
/// forgotten entry only costs one more insert into a set that already holds the edge.
@usableFromInline
struct EdgeMemo {
    @usableFromInline
    struct Entry {
        @usableFromInline var epoch: UInt64 = 0
        @usableFromInline var dependent: UInt64 = 0
        @usableFromInline var dependency: UInt64 = 0

        @inlinable init() {}

        @inlinable init(epoch: UInt64, dependent: UInt64, dependency: UInt64) {
            self.epoch = epoch
            self.dependent = dependent
            self.dependency = dependency
        }
    }

    @usableFromInline static let entries = 64
    @usableFromInline let slots: UnsafeMutablePointer<Entry>

    init() {
        slots = ThreadFrame.allocateLines(of: Entry.self, count: Self.entries)
        slots.initialize(repeating: Entry(), count: Self.entries)
    }

    func deallocate() {
        UnsafeMutableRawPointer(slots).deallocate()
    }

    @inlinable @inline(__always)
    static func slot(_ entry: Entry) -> Int {
        let mixed = entry.epoch &* 0x9E37_79B9_7F4A_7C15 ^ entry.dependent &* 0xC2B2_AE3D_27D4_EB4F ^ entry.dependency
        return Int(truncatingIfNeeded: mixed >> 58) // 64 entries
    }

    /// Whether this thread recorded the edge lately.
    @inlinable
    func contains(_ entry: Entry) -> Bool {
        let stored = slots[Self.slot(entry)]
        return stored.epoch == entry.epoch && stored.dependent == entry.dependent && stored.dependency == entry.dependency
    }

    func remember(_ entry: Entry) {
        slots[Self.slot(entry)] = entry
    }
}

/// Serial numbers for registrations and containers' edge epochs: unique in the process, never 0.
enum Serials {
    private static let last = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        last.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
