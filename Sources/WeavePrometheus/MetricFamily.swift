/// One metric family: its name, type, help, optional unit, and samples.
public struct MetricFamily: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
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
            lhs.suffix == rhs.suffix && lhs.value == rhs.value
                && lhs.labels.map(\.0) == rhs.labels.map(\.0) && lhs.labels.map(\.1) == rhs.labels.map(\.1)
        }
    }

    /// The family name; for counters without `_total` (the samples carry it).
    public var name: String
    public var kind: Kind
    public var help: String
    /// The base unit (`seconds`, `bytes`), which the name must end with; OpenMetrics prints it as `# UNIT`.
    public var unit: String?
    public var samples: [Sample]
    /// Sample lines already in exposition form (same in both formats), written after `samples`:
    /// how large histograms avoid a `Sample` per bucket.
    public var renderedSamples: [UInt8]

    public init(name: String, kind: Kind, help: String, unit: String? = nil, samples: [Sample], renderedSamples: [UInt8] = []) {
        self.name = name
        self.kind = kind
        self.help = help
        self.unit = unit
        self.samples = samples
        self.renderedSamples = renderedSamples
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
