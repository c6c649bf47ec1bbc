import WeaveSupport

/// Sample lines already in exposition syntax, each ending in a line feed (the same in both formats).
/// `ExpositionParser` writes all of one exposition's lines once, and each family it reads refers to
/// its own part of them: nothing is copied per family, and the memory goes when the last family does.
public struct PreformattedLines: RandomAccessCollection, Sendable, Equatable {
    /// Memory from `malloc`, freed with the last reference.
    final class Storage: @unchecked Sendable {
        let base: UnsafeMutablePointer<UInt8>

        /// Takes over `base`, which `malloc` or `realloc` returned.
        init(taking base: UnsafeMutablePointer<UInt8>) { self.base = base }

        deinit { free(base) }

        /// `realloc`'s memory, which a storage can take over; out of memory traps, as Swift's allocations do.
        static func reallocate(_ base: UnsafeMutablePointer<UInt8>?, _ capacity: Int) -> UnsafeMutablePointer<UInt8> {
            guard let memory = realloc(base, capacity) else { fatalError("out of memory: \(capacity) bytes of exposition lines") }
            return memory.assumingMemoryBound(to: UInt8.self)
        }
    }

    private let storage: Storage?
    private let range: Range<Int>

    /// No lines.
    public init() {
        storage = nil
        range = 0..<0
    }

    /// A copy of `bytes`, which must be whole sample lines.
    public init(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else {
            self.init()
            return
        }
        let base = Storage.reallocate(nil, bytes.count)
        bytes.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: bytes.count) }
        self.init(storage: Storage(taking: base), range: 0..<bytes.count)
    }

    init(storage: Storage, range: Range<Int>) {
        self.storage = range.isEmpty ? nil : storage
        self.range = range.isEmpty ? 0..<0 : range
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { range.count }
    public subscript(position: Int) -> UInt8 {
        precondition(indices.contains(position), "index out of range")
        return storage!.base[range.lowerBound + position]
    }

    /// The lines' bytes, valid during `body` only.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        guard let storage else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try withExtendedLifetime(storage) { try body(UnsafeRawBufferPointer(start: storage.base + range.lowerBound, count: range.count)) }
    }

    public func withContiguousStorageIfAvailable<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
        try withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }

    public static func == (lhs: PreformattedLines, rhs: PreformattedLines) -> Bool {
        lhs.count == rhs.count
            && lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 } }
    }
}
