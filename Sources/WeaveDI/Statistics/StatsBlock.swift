/// Where each figure sits in a key's record of `StatsBlock.wordsPerKey` counters.
@usableFromInline
enum StatsField {
    @usableFromInline static let resolutions = 0
    @usableFromInline static let instancesCreated = 1
    /// Four counters, in `ResolutionError.Kind` order.
    @usableFromInline static let errors = 2
    @usableFromInline static let slowResolutions = 6
    /// A histogram: `LatencyBuckets.count` bucket counts, then the sum of nanoseconds.
    @usableFromInline static let hitLatency = 7
    // Computed, so the hot path folds them to constants (a `static let` of an expression is reached
    // through a `swift_once` check from other modules).
    @inlinable static var factoryLatency: Int { hitLatency + LatencyBuckets.count + 1 }
    @inlinable static var wordsPerKey: Int { factoryLatency + LatencyBuckets.count + 1 }
}

/// The latency histogram's upper bounds, 1 µs to 10 s, then +Inf: the E24 series (24 bounds a
/// decade, 1.0 1.1 1.2 1.3 1.5 … 8.2 9.1), whose neighbours are at most 1.154 apart. A quantile read
/// from it is within 7.5 % of the truth (`LatencyHistogram.quantile`). Exporters show 11 of them
/// (`LatencyHistogram.exportedBounds`).
public enum LatencyBuckets {
    /// The E24 series, times ten.
    static let mantissas: [UInt64] = [10, 11, 12, 13, 15, 16, 18, 20, 22, 24, 27, 30, 33, 36, 39, 43, 47, 51, 56, 62, 68, 75, 82, 91]
    /// Upper bounds in nanoseconds (+Inf not included): 1 µs (10 × 10²) to 9.1 s, then 10 s.
    static let boundsNanos: [UInt64] = (2...8).flatMap { exponent in
        mantissas.map { $0 * (0..<exponent).reduce(1) { product, _ in product * 10 } }
    } + [10_000_000_000]
    /// Buckets, +Inf included: `boundsNanos.count + 1` (a literal, so the hot path folds it).
    @usableFromInline static let count = 170
    /// Upper bounds in seconds (+Inf not included), for exporters.
    public static let boundsSeconds: [Double] = boundsNanos.map { Double($0) / 1e9 }

    static func index(ofNanos nanos: UInt64) -> Int {
        if nanos <= 1_000 { return 0 } // most resolves: no search through the bounds
        // The first bound at or above `nanos` (count - 1, +Inf, when none is).
        var low = 1, high = boundsNanos.count
        while low < high {
            let middle = (low + high) / 2
            if boundsNanos[middle] < nanos { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// One shard's statistics: a record of counters per registration index. Written only by the
/// shard's readers under its lock (or by a writer holding every shard), so plain increments are exact.
@usableFromInline
struct StatsBlock {
    @usableFromInline var words: UnsafeMutablePointer<UInt64>
    /// Keys the block has room for.
    @usableFromInline var capacity: Int

    init() {
        capacity = 16
        words = Self.allocate(keys: capacity)
    }

    /// Counters on cache lines of their own, so shards never false-share.
    static func allocate(keys: Int) -> UnsafeMutablePointer<UInt64> {
        let count = keys * StatsField.wordsPerKey
        let words = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<UInt64>.stride, alignment: 128)
            .bindMemory(to: UInt64.self, capacity: count)
        words.initialize(repeating: 0, count: count)
        return words
    }

    /// Counts one resolve of the registration at `index`.
    @inlinable @inline(__always)
    mutating func countHit(_ index: Int) {
        if index >= capacity { grow(to: index + 1) }
        words[index &* StatsField.wordsPerKey &+ StatsField.resolutions] &+= 1
    }

    /// Adds `amount` to `field` of the record at `index`.
    mutating func add(_ amount: UInt64, at field: Int, index: Int) {
        if index >= capacity { grow(to: index + 1) }
        words[index * StatsField.wordsPerKey + field] &+= amount
    }

    /// Records one observation of `nanos` in the histogram at `field`.
    mutating func observe(nanos: UInt64, histogram field: Int, index: Int) {
        add(1, at: field + LatencyBuckets.index(ofNanos: nanos), index: index)
        add(nanos, at: field + LatencyBuckets.count, index: index)
    }

    /// Adds the records of `indices` (those the block has room for) into `totals`, laid out like
    /// `words` from the first of `indices` on.
    func accumulate(_ indices: Range<Int>, into totals: UnsafeMutablePointer<UInt64>) {
        let stride = StatsField.wordsPerKey
        for index in indices where index < capacity {
            let source = words + index * stride
            let target = totals + (index - indices.lowerBound) * stride
            for word in 0..<stride { target[word] &+= source[word] }
        }
    }

    /// Zeroes every counter.
    func reset() {
        words.update(repeating: 0, count: capacity * StatsField.wordsPerKey)
    }

    @usableFromInline
    mutating func grow(to needed: Int) {
        var newCapacity = capacity
        while newCapacity < needed { newCapacity *= 2 }
        let grown = Self.allocate(keys: newCapacity)
        grown.update(from: words, count: capacity * StatsField.wordsPerKey)
        deallocate()
        words = grown
        capacity = newCapacity
    }

    func deallocate() {
        UnsafeMutableRawPointer(words).deallocate()
    }
}
