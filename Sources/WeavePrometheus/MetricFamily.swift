/// One metric family: its name, type, help, optional unit, and samples.
public struct MetricFamily: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram, summary
    }

    /// One line of the exposition: the family name plus `suffix` (`_total`, `_bucket`, …), labels and a value.
    public struct Sample: Sendable, Equatable {
        public var suffix: String
        public var labels: [(String, String)]
        public var value: Double

        public init(suffix: String = "", labels: [(String, String)] = [], value: Double) {
            self.suffix = suffix
            self.labels = labels
            self.value = value
        }

        public static func == (lhs: Sample, rhs: Sample) -> Bool {
            lhs.suffix == rhs.suffix && lhs.value == rhs.value && sameLabels(lhs.labels, rhs.labels)
        }
    }

    /// One series of a histogram family: its `_bucket` lines (cumulative, `+Inf` last), `_sum` and
    /// `_count`, and in the protobuf exposition its native histogram when it has one.
    public struct HistogramSeries: Sendable, Equatable {
        public var labels: [(String, String)]
        /// The `le` label of each bucket, `+Inf` last (one shared array for a whole family).
        public var bucketLabels: [String]
        /// Observations per bucket, not cumulative: the renderer adds them up. As many as `bucketLabels`.
        public var bucketCounts: [UInt64]
        public var sum: Double
        /// The same observations in exponential buckets, which only the protobuf exposition shows.
        public var native: NativeHistogram?

        public init(labels: [(String, String)], bucketLabels: [String], bucketCounts: [UInt64], sum: Double,
                    native: NativeHistogram? = nil) {
            precondition(bucketLabels.count == bucketCounts.count, "one count per bucket")
            self.labels = labels
            self.bucketLabels = bucketLabels
            self.bucketCounts = bucketCounts
            self.sum = sum
            self.native = native
        }

        /// Observations: the classic buckets' counts added up.
        public var count: UInt64 { bucketCounts.reduce(0, &+) }

        public static func == (lhs: HistogramSeries, rhs: HistogramSeries) -> Bool {
            lhs.bucketLabels == rhs.bucketLabels && lhs.bucketCounts == rhs.bucketCounts && lhs.sum == rhs.sum
                && lhs.native == rhs.native && sameLabels(lhs.labels, rhs.labels)
        }
    }

    /// The family name; for counters without `_total` (the samples carry it).
    public var name: String
    public var kind: Kind
    public var help: String
    /// The base unit (`seconds`, `bytes`), which the name must end with; OpenMetrics prints it as `# UNIT`.
    public var unit: String?
    public var samples: [Sample]
    /// Histogram series, written after `samples`: a large histogram family needs no `Sample` per bucket.
    public var histograms: [HistogramSeries]
    /// Sample lines already in exposition syntax, written last: the series another process rendered,
    /// relabelled (see `ExpositionParser`).
    public var preformatted: PreformattedLines

    public init(name: String, kind: Kind, help: String, unit: String? = nil, samples: [Sample] = [],
                histograms: [HistogramSeries] = [], preformatted: PreformattedLines = PreformattedLines()) {
        self.name = name
        self.kind = kind
        self.help = help
        self.unit = unit
        self.samples = samples
        self.histograms = histograms
        self.preformatted = preformatted
    }

    /// A counter family; `name` without `_total`.
    public static func counter(_ name: String, _ help: String, _ samples: [([(String, String)], Double)]) -> MetricFamily {
        MetricFamily(name: name, kind: .counter, help: help,
                     samples: samples.map { Sample(suffix: "_total", labels: $0.0, value: $0.1) })
    }

    /// A gauge family.
    public static func gauge(_ name: String, _ help: String, unit: String? = nil,
                             _ samples: [([(String, String)], Double)]) -> MetricFamily {
        MetricFamily(name: name, kind: .gauge, help: help, unit: unit,
                     samples: samples.map { Sample(labels: $0.0, value: $0.1) })
    }
}

private func sameLabels(_ lhs: [(String, String)], _ rhs: [(String, String)]) -> Bool {
    lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
}
