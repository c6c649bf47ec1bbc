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

/// The latency histogram's buckets: Prometheus's native-histogram buckets of schema 3, 8 an octave,
/// whose upper bounds are 2^(k/8) seconds. Bucket 0 holds what is at most 2^-20 s (0.95 µs: the
/// zero bucket of the native histogram); buckets 1…187 are k = -159…27, up to 2^(27/8) s (10.4 s);
/// the last bucket holds what is above that. Neighbouring bounds are 1.0905 apart, so a quantile
/// read from them is within 4.5 % of the truth (`LatencyHistogram.quantile`), and the native
/// histogram an exporter makes of them is these very counts. Exporters' classic buckets are 11 of
/// the bounds (`LatencyHistogram.exportedBounds`).
public enum LatencyBuckets {
    /// The native-histogram schema of the buckets: 2^3 buckets an octave.
    public static let schema = 3
    /// The native index k of the first bound, 2^(k/8) s: 2^-20 s.
    public static let firstIndex = -160
    /// 2^(j/8) for j in 0..<8: Prometheus's `nativeHistogramBounds` of schema 3 times 2, its last-bit
    /// deviations from the nearest doubles included, so that the bounds are Prometheus's to the bit.
    static let octave: [Double] = [0.5, 0.5452538663326288, 0.5946035575013605, 0.6484197773255048,
                                   0.7071067811865475, 0.7711054127039704, 0.8408964152537144, 0.9170040432046711].map { $0 * 2 }
    /// Upper bounds in seconds (the last bucket has none): 2^(k/8) for k = -160…27, as Prometheus
    /// computes them.
    public static let boundsSeconds: [Double] = (firstIndex...27).map { bound($0, scale: 1) }
    /// The bounds in whole nanoseconds, rounded down: for a whole number of nanoseconds n and a bound
    /// b, n ≤ b exactly when n ≤ ⌊b⌋ (no bound is within 0.002 ns of a whole number, so the doubles
    /// floor right).
    static let boundsNanos: [UInt64] = (firstIndex...27).map { UInt64(bound($0, scale: 1e9).rounded(.down)) }
    /// Buckets, the last included: `boundsNanos.count + 1` (a literal, so the hot path folds it).
    @usableFromInline static let count = 189

    /// 2^(k/8) × `scale`: the octave's factor scaled by a power of two, which is exact.
    private static func bound(_ k: Int, scale: Double) -> Double {
        let (octaves, step) = k.quotientAndRemainder(dividingBy: 8)
        let (whole, part) = step < 0 ? (octaves - 1, step + 8) : (octaves, step)
        return Double(sign: .plus, exponent: whole, significand: scale) * octave[part]
    }

    /// The bucket of `nanos`: the first bound at or above it (`count - 1`, the last bucket, when
    /// none is). A lookup, not a search: `nanos`'s power of two and the 4 bits below its highest
    /// give a sixteenth of an octave (1.0625 wide at most, narrower than a bucket), whose lowest
    /// value's bucket `cellBuckets` holds; `nanos` is in it or the next.
    static func index(ofNanos nanos: UInt64) -> Int {
        if nanos <= 953 { return 0 } // most resolves
        let octave = 63 - nanos.leadingZeroBitCount // 9 or more
        let bucket = Int(cellBuckets[octave &<< 4 | Int(truncatingIfNeeded: nanos &>> UInt64(octave &- 4)) & 15])
        return bucket < boundsNanos.count && nanos > boundsNanos[bucket] ? bucket + 1 : bucket
    }

    /// For each sixteenth of an octave of nanoseconds (`octave << 4 | the 4 bits below the highest`),
    /// the bucket of its lowest value, found by a search over the bounds.
    static let cellBuckets: [UInt8] = (0..<64 * 16).map { cell in
        let (octave, sixteenth) = (cell >> 4, UInt64(cell & 15))
        guard octave >= 4 else { return 0 }
        let lowest = (16 + sixteenth) << UInt64(octave - 4)
        return UInt8(boundsNanos.firstIndex { $0 >= lowest } ?? boundsNanos.count)
    }
}

/// One shard's statistics: a record of counters per registration index. Written only by the
/// shard's readers under its lock (or by a writer holding every shard), so plain increments are exact.
@usableFromInline
struct StatsBlock {
    @usableFromInline var words: UnsafeMutablePointer<UInt64>
    /// Keys the block has room for.
    @usableFromInline var capacity: Int

    /// No room yet: a shard's records are made by its first write (a container's 8 shards are
    /// rarely all used, and 16 keys take 50 KB in each).
    init() {
        capacity = 0
        words = Self.allocate(keys: 0)
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
        var newCapacity = max(capacity, 16)
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
