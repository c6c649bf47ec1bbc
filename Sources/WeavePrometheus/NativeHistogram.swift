/// A native histogram (Prometheus's exponential buckets): bucket `i` holds the observations in
/// (base^(i-1), base^i] with base = 2^(2^-schema), and the zero bucket those in
/// [-zeroThreshold, zeroThreshold]. Counts are absolute, whole, and kept only for the buckets given
/// (empty ones may be left out). It travels in the protobuf exposition only (`ProtobufExposition`);
/// the text formats show the series' classic buckets.
public struct NativeHistogram: Sendable, Equatable {
    /// One bucket: its index and its count of observations.
    public struct Bucket: Sendable, Equatable {
        public var index: Int32
        public var count: UInt64

        public init(index: Int32, count: UInt64) {
            self.index = index
            self.count = count
        }
    }

    /// The resolution, from -4 (base 2^16) to 8 (base 2^(1/256)).
    public var schema: Int32
    public var zeroThreshold: Double
    public var zeroCount: UInt64
    /// Buckets of positive observations, by increasing index.
    public var positive: [Bucket]
    /// Buckets of negative observations (bucket `i` holds [-base^i, -base^(i-1))), by increasing index.
    public var negative: [Bucket]

    public init(schema: Int32, zeroThreshold: Double, zeroCount: UInt64, positive: [Bucket], negative: [Bucket] = []) {
        self.schema = schema
        self.zeroThreshold = zeroThreshold
        self.zeroCount = zeroCount
        self.positive = positive
        self.negative = negative
    }

    /// The schemas Prometheus reads.
    public static let schemas: ClosedRange<Int32> = -4...8

    /// Why Prometheus would refuse it as a histogram of `count` observations, or nil: an unknown
    /// schema, a zero threshold that is negative or not a number, buckets out of order or given
    /// twice, or more observations in the buckets than `count` (fewer is allowed: observations of
    /// NaN, or above the last bucket a recorder has, are counted in no bucket).
    public func problem(count: UInt64) -> String? {
        guard Self.schemas.contains(schema) else { return "native histogram schema \(schema) is not one of -4…8" }
        guard zeroThreshold.isFinite, zeroThreshold >= 0 else { return "native histogram zero threshold \(zeroThreshold) is not a number ≥ 0" }
        for (side, buckets) in [("positive", positive), ("negative", negative)] {
            for (previous, next) in zip(buckets, buckets.dropFirst()) where next.index <= previous.index {
                return "native histogram \(side) buckets overlap or are out of order (index \(next.index) after \(previous.index))"
            }
        }
        var total = zeroCount
        for bucket in positive + negative {
            let (sum, overflow) = total.addingReportingOverflow(bucket.count)
            guard !overflow else { return "native histogram bucket counts overflow" }
            total = sum
        }
        guard total <= count else { return "native histogram buckets hold \(total) observations, more than its count of \(count)" }
        return nil
    }
}
