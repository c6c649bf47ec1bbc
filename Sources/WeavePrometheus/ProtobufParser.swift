import WeaveSupport

/// Reads a protobuf exposition another process rendered (delimited `io.prometheus.client.MetricFamily`
/// messages) back into families, so that it can be merged with others: counters and gauges as
/// samples, summaries as their quantile, `_sum` and `_count` samples, histograms as series with
/// their classic buckets and their native histogram. Timestamps, exemplars and created timestamps
/// are left out, as `ExpositionParser` leaves them out of the text formats.
///
/// It is as strict as `ExpositionParser`, and for the same reason: whatever it accepts, the merged
/// exposition stays valid for a Prometheus server. It rejects the whole input, with the message's
/// number and the reason, for bytes that are not the wire format, a name or label that is not valid
/// or not UTF-8, a label given twice or beginning with `__`, a type other than counter, gauge,
/// summary and histogram, a series given twice, a metric without the value of its type, counts or
/// sums that are negative or not a number, classic buckets out of order, and native histograms
/// Prometheus would refuse (`NativeHistogram.problem`), or that count in floats. Labels the caller
/// adds go first; a label of the same name already there is kept as `exported_<name>`. What a parse
/// may cost is bounded (`ParseLimits`: labels per series, samples, time) and, through `reserve`, the
/// memory of what it builds, counted as it is built.
public enum ProtobufParser {
    /// Why an exposition was rejected: the message (1-based) and the reason.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let message: Int
        public let reason: String
        /// Whether `reserve` refused room for what was read, rather than the bytes being invalid.
        public var outOfRoom = false

        public var description: String { "protobuf message \(message): \(reason)" }
    }

    /// What is read is reserved in steps of this many bytes (of its text rendering's size).
    static let reserveStep = 64 << 10

    /// The families of `bytes`, each series with `labels` first, within `limits`. As it reads, it
    /// asks `reserve` for room for what it builds (labels, buckets, native spans and deltas, before
    /// they are decoded), then for what it keeps (`Exposition.estimatedSize`), in steps of 64 KiB and
    /// at the end, and stops when refused: a compact answer cannot grow into more memory than the
    /// caller allows.
    public static func parse(_ bytes: [UInt8], adding labels: [(String, String)] = [], limits: ParseLimits = ParseLimits(),
                             reserve: (Int) -> Bool = { _ in true }) throws(Failure) -> [MetricFamily] {
        var families: [MetricFamily] = []
        var names: Set<String> = []
        var room = Room()
        var samples = 0
        try withoutActuallyEscaping(reserve) { reserve throws(Failure) in try bytes.withUnsafeBufferPointer { buffer throws(Failure) in
            var stream = ProtobufWire.Reader(UnsafeRawBufferPointer(buffer))
            while !stream.isAtEnd {
                let number = families.count + 1
                do throws(WireFailure) {
                    var budget = Budget(limits: limits, room: room, samples: samples, reserve: reserve)
                    defer { (room, samples) = (budget.room, budget.samples) }
                    let family = try readFamily(try stream.delimited(), adding: labels, budget: &budget)
                    guard names.insert(family.name).inserted else { throw WireFailure("family \(shown(family.name)) is given twice") }
                    families.append(family)
                } catch {
                    throw Failure(message: number, reason: error.message, outOfRoom: error.outOfRoom)
                }
            }
            guard room.settle(reserve) else {
                throw Failure(message: families.count, reason: "its families need more room than is left", outOfRoom: true)
            }
        } }
        return families
    }

    /// The room taken so far, reserved in steps.
    private struct Room {
        var pending = 0
        /// All it counted.
        var total = 0

        /// Counts `bytes`; false when a step of them was refused.
        mutating func take(_ bytes: Int, _ reserve: (Int) -> Bool) -> Bool {
            pending += bytes
            total += bytes
            return pending < ProtobufParser.reserveStep || settle(reserve)
        }

        /// Reserves what is pending.
        mutating func settle(_ reserve: (Int) -> Bool) -> Bool {
            defer { pending = 0 }
            return pending == 0 || reserve(pending)
        }
    }

    private typealias WireFailure = ProtobufWire.WireFailure

    /// What the parse may still spend: room, samples and time.
    private struct Budget {
        let limits: ParseLimits
        var room: Room
        var samples: Int
        let reserve: (Int) -> Bool

        /// Counts `bytes` of what is built.
        mutating func take(_ bytes: Int) throws(WireFailure) {
            guard room.take(bytes, reserve) else { throw WireFailure.outOfRoom }
        }

        /// Counts `count` samples, and checks the deadline.
        mutating func count(_ count: Int) throws(WireFailure) {
            samples += count
            if let limit = limits.samples, samples > limit { throw WireFailure(limits.tooManySamples()) }
            if limits.isLate { throw WireFailure(ParseLimits.lateMessage) }
        }
    }

    private static func readFamily(_ bytes: UnsafeRawBufferPointer, adding added: [(String, String)],
                                   budget: inout Budget) throws(WireFailure) -> MetricFamily {
        var name = "", help = "", unit: String?
        var type: UInt64 = 3 // UNTYPED, the proto's default
        var metrics: [UnsafeRawBufferPointer] = []
        try ProtobufWire.Reader.fields(of: bytes) { field, wireType, reader throws(WireFailure) in
            switch (field, wireType) {
            case (1, ProtobufWire.delimited): name = try text(reader.delimited(), "family name")
            case (2, ProtobufWire.delimited): help = try text(reader.delimited(), "help")
            case (3, ProtobufWire.varint): type = try reader.varint()
            case (4, ProtobufWire.delimited):
                try budget.take(Self.builtSize)
                metrics.append(try reader.delimited())
            case (5, ProtobufWire.delimited): unit = try text(reader.delimited(), "unit")
            default: return false
            }
            return true
        }
        guard ExpositionParser.isName(name, colons: true) else { throw WireFailure("family name \"\(shown(name).logSafe)\" is not a valid metric name") }
        let kind: MetricFamily.Kind
        switch ProtobufExposition.MetricType(rawValue: type) {
        case .counter: kind = .counter
        case .gauge: kind = .gauge
        case .summary: kind = .summary
        case .histogram: kind = .histogram
        default: throw WireFailure("family \(shown(name)) has type \(type), not counter, gauge, summary or histogram")
        }
        if let unit, unit.isEmpty || !name.hasSuffix(unit) && !name.hasSuffix(unit + "_total") {
            throw WireFailure("family \(shown(name)) has unit \"\(shown(unit).logSafe)\", which does not end its name")
        }
        // A counter family is named as its series are; ours keeps the name without `_total`.
        let base = kind == .counter && name.hasSuffix("_total") ? String(name.dropLast(6)) : name
        var family = MetricFamily(name: base, kind: kind, help: help, unit: unit)
        let nameSize = base.utf8.count
        try budget.take(2 * nameSize + help.utf8.count + 40)
        var seen: Set<String> = []
        for bytes in metrics {
            let before = budget.room.total
            var metric = try readMetric(bytes, kind: kind, family: shown(name), budget: &budget)
            // What was counted while it was built (and its place in `metrics`), the rest of its size when kept.
            let built = budget.room.total - before + Self.builtSize
            metric.labels = relabel(metric.labels, adding: added)
            guard seen.insert(seriesKey(metric.labels)).inserted else {
                throw WireFailure("family \(shown(name)) has a series twice")
            }
            let samples = family.samples.count
            switch metric.value {
            case .sample(let value):
                family.samples.append(.init(suffix: kind == .counter ? "_total" : "", labels: metric.labels, value: value))
            case .summary(let count, let sum, let quantiles):
                for (quantile, value) in quantiles {
                    family.samples.append(.init(labels: metric.labels + [("quantile", "\(quantile)")], value: value))
                }
                family.samples.append(.init(suffix: "_sum", labels: metric.labels, value: sum))
                family.samples.append(.init(suffix: "_count", labels: metric.labels, value: Double(count)))
            case .histogram(var series):
                series.labels = metric.labels
                try budget.count(series.bucketCounts.count + 2)
                try budget.take(max(0, Exposition.estimatedSize(series, name: nameSize) - built))
                family.histograms.append(series)
                continue
            }
            try budget.count(family.samples.count - samples)
            let size = family.samples[samples...].reduce(0) { $0 + Exposition.estimatedSize($1, name: nameSize) }
            try budget.take(max(0, size - built))
        }
        return family
    }

    private enum Value {
        case sample(Double)
        case summary(count: UInt64, sum: Double, quantiles: [(Double, Double)])
        case histogram(MetricFamily.HistogramSeries)
    }

    private static func readMetric(_ bytes: UnsafeRawBufferPointer, kind: MetricFamily.Kind, family: String,
                                   budget: inout Budget) throws(WireFailure) -> (labels: [(String, String)], value: Value) {
        var labels: [(String, String)] = []
        var value: Value?
        try ProtobufWire.Reader.fields(of: bytes) { field, wireType, reader throws(WireFailure) in
            switch (field, wireType, kind) {
            case (1, ProtobufWire.delimited, _):
                guard labels.count < budget.limits.labels else { throw WireFailure("a metric of \(family): \(budget.limits.tooManyLabels())") }
                let label = try readLabel(reader.delimited(), family: family)
                try budget.take(label.0.utf8.count + label.1.utf8.count + 4)
                labels.append(label)
            case (2, ProtobufWire.delimited, .gauge), (3, ProtobufWire.delimited, .counter):
                let number = try readSingle(reader.delimited())
                guard kind == .gauge || number >= 0 else { throw WireFailure("counter \(family) has the value \(number)") }
                value = .sample(number)
            case (4, ProtobufWire.delimited, .summary): value = try readSummary(reader.delimited(), family: family, budget: &budget)
            case (7, ProtobufWire.delimited, .histogram): value = .histogram(try readHistogram(reader.delimited(), family: family, budget: &budget))
            default: return false
            }
            return true
        }
        guard let value else { throw WireFailure("a metric of \(family) has no value of its type") }
        let special = kind == .histogram ? "le" : kind == .summary ? "quantile" : nil
        // Compared with each other while there are few, else through a set: linear in the labels.
        var names: Set<Substring> = []
        for (index, (name, _)) in labels.enumerated() {
            let twice = labels.count <= 8 ? labels[..<index].contains(where: { $0.0 == name }) : !names.insert(name[...]).inserted
            guard !twice else { throw WireFailure("a metric of \(family) has label \(shown(name)) twice") }
            guard name != special else { throw WireFailure("a metric of \(family) has label \(name), which its type reserves") }
        }
        return (labels, value)
    }

    private static func readLabel(_ bytes: UnsafeRawBufferPointer, family: String) throws(WireFailure) -> (String, String) {
        var name = "", value = ""
        try ProtobufWire.Reader.fields(of: bytes) { field, wireType, reader throws(WireFailure) in
            switch (field, wireType) {
            case (1, ProtobufWire.delimited): name = try text(reader.delimited(), "label name")
            case (2, ProtobufWire.delimited): value = try text(reader.delimited(), "label value")
            default: return false
            }
            return true
        }
        guard ExpositionParser.isName(name, colons: false), !name.hasPrefix("__") else {
            throw WireFailure("a metric of \(family) has label name \"\(shown(name).logSafe)\", which is not valid or begins with __")
        }
        return (name, value)
    }

    /// The value of a `Gauge` or `Counter` message (field 1).
    private static func readSingle(_ bytes: UnsafeRawBufferPointer) throws(WireFailure) -> Double {
        var value = 0.0
        try ProtobufWire.Reader.fields(of: bytes) { field, wireType, reader throws(WireFailure) in
            guard field == 1, wireType == ProtobufWire.fixed64 else { return false }
            value = try reader.double()
            return true
        }
        return value
    }

    private static func readSummary(_ bytes: UnsafeRawBufferPointer, family: String, budget: inout Budget) throws(WireFailure) -> Value {
        var count: UInt64 = 0, sum = 0.0
        var quantiles: [(Double, Double)] = []
        try ProtobufWire.Reader.fields(of: bytes) { field, wireType, reader throws(WireFailure) in
            switch (field, wireType) {
            case (1, ProtobufWire.varint): count = try reader.varint()
            case (2, ProtobufWire.fixed64): sum = try reader.double()
            case (3, ProtobufWire.delimited):
                var quantile = 0.0, value = 0.0
                try ProtobufWire.Reader.fields(of: reader.delimited()) { field, wireType, pair throws(WireFailure) in
                    switch (field, wireType) {
                    case (1, ProtobufWire.fixed64): quantile = try pair.double()
                    case (2, ProtobufWire.fixed64): value = try pair.double()
                    default: return false
                    }
                    return true
                }
                guard (0...1).contains(quantile) else { throw WireFailure("summary \(family) has quantile \(quantile), not within 0…1") }
                guard !(value < 0) else { throw WireFailure("summary \(family) has a negative quantile value") }
                try budget.take(Self.builtSize)
                quantiles.append((quantile, value))
            default: return false
            }
            return true
        }
        guard sum >= 0 else { throw WireFailure("summary \(family) has the sum \(sum)") }
        return .summary(count: count, sum: sum, quantiles: quantiles)
    }

    private static func readHistogram(_ bytes: UnsafeRawBufferPointer, family: String,
                                      budget: inout Budget) throws(WireFailure) -> MetricFamily.HistogramSeries {
        var count: UInt64 = 0, sum = 0.0
        var buckets: [(bound: Double, cumulative: UInt64)] = []
        var schema: Int64 = 0, zeroThreshold = 0.0, zeroCount: UInt64 = 0
        var positiveSpans: [(offset: Int64, length: UInt64)] = [], negativeSpans: [(offset: Int64, length: UInt64)] = []
        var positiveDeltas: [Int64] = [], negativeDeltas: [Int64] = []
        try ProtobufWire.Reader.fields(of: bytes) { field, wireType, reader throws(WireFailure) in
            switch (field, wireType) {
            case (1, ProtobufWire.varint): count = try reader.varint()
            case (2, ProtobufWire.fixed64): sum = try reader.double()
            case (3, ProtobufWire.delimited):
                var bound = 0.0, cumulative: UInt64 = 0
                try ProtobufWire.Reader.fields(of: reader.delimited()) { field, wireType, bucket throws(WireFailure) in
                    switch (field, wireType) {
                    case (1, ProtobufWire.varint): cumulative = try bucket.varint()
                    case (2, ProtobufWire.fixed64): bound = try bucket.double()
                    case (4, _): throw WireFailure("histogram \(family) counts a bucket in floats, which is not supported")
                    default: return false
                    }
                    return true
                }
                // A bucket kept, and its bound as text.
                try budget.take(2 * Self.builtSize)
                buckets.append((bound, cumulative))
            case (5, ProtobufWire.varint): schema = ProtobufWire.unzigzag(try reader.varint())
            case (6, ProtobufWire.fixed64): zeroThreshold = try reader.double()
            case (7, ProtobufWire.varint): zeroCount = try reader.varint()
            case (9, ProtobufWire.delimited), (12, ProtobufWire.delimited):
                var offset: Int64 = 0, length: UInt64 = 0
                try ProtobufWire.Reader.fields(of: reader.delimited()) { field, wireType, span throws(WireFailure) in
                    switch (field, wireType) {
                    case (1, ProtobufWire.varint): offset = ProtobufWire.unzigzag(try span.varint())
                    case (2, ProtobufWire.varint): length = try span.varint()
                    default: return false
                    }
                    return true
                }
                try budget.take(Self.builtSize)
                if field == 12 { positiveSpans.append((offset, length)) } else { negativeSpans.append((offset, length)) }
            case (10, _), (13, _):
                // A delta is decoded, then a bucket: counted before they are.
                try budget.take(reader.varintCount(wireType) * 3 * Self.builtSize / 2)
                let deltas = try reader.varints(wireType).map(ProtobufWire.unzigzag)
                if field == 13 { positiveDeltas += deltas } else { negativeDeltas += deltas }
            case (4, _), (8, _), (11, _), (14, _):
                throw WireFailure("histogram \(family) counts in floats (a float histogram), which is not supported")
            default: return false
            }
            return true
        }
        guard sum >= 0 else { throw WireFailure("histogram \(family) has the sum \(sum)") }
        // Classic buckets: bounds going up, counts not going down, none above the count.
        var labels: [String] = [], counts: [UInt64] = []
        var previous: (bound: Double, cumulative: UInt64) = (-.infinity, 0)
        for bucket in buckets {
            guard bucket.bound > previous.bound else { throw WireFailure("histogram \(family) has buckets whose bounds do not go up") }
            guard bucket.cumulative >= previous.cumulative, bucket.cumulative <= count else {
                throw WireFailure("histogram \(family) has bucket counts that go down or pass its count")
            }
            guard bucket.bound < .infinity else {
                guard bucket.cumulative == count else { throw WireFailure("histogram \(family) has a +Inf bucket other than its count") }
                continue
            }
            labels.append("\(bucket.bound)")
            counts.append(bucket.cumulative - previous.cumulative)
            previous = bucket
        }
        labels.append("+Inf")
        counts.append(count - previous.cumulative)
        var series = MetricFamily.HistogramSeries(labels: [], bucketLabels: labels, bucketCounts: counts, sum: sum)
        let isNative = zeroThreshold > 0 || zeroCount > 0 || !positiveSpans.isEmpty || !negativeSpans.isEmpty
        guard isNative else { return series }
        guard let schema32 = Int32(exactly: schema) else { throw WireFailure("histogram \(family) has schema \(schema)") }
        let native = NativeHistogram(schema: schema32, zeroThreshold: zeroThreshold, zeroCount: zeroCount,
                                     positive: try nativeBuckets(positiveSpans, positiveDeltas, family: family),
                                     negative: try nativeBuckets(negativeSpans, negativeDeltas, family: family))
        if let problem = native.problem(count: count) { throw WireFailure("histogram \(family): \(problem)") }
        series.native = native
        return series
    }

    /// Spans and deltas as buckets with their absolute counts: the spans must cover the deltas
    /// exactly, follow each other (no negative gap), and every count must stay whole and ≥ 0.
    private static func nativeBuckets(_ spans: [(offset: Int64, length: UInt64)], _ deltas: [Int64], family: String) throws(WireFailure) -> [NativeHistogram.Bucket] {
        var buckets: [NativeHistogram.Bucket] = []
        buckets.reserveCapacity(deltas.count)
        var index: Int64 = 0, count: Int64 = 0, next = 0
        for (number, span) in spans.enumerated() {
            guard number == 0 || span.offset >= 0 else { throw WireFailure("histogram \(family) has native spans that overlap (offset \(span.offset))") }
            guard Int32(exactly: span.offset) != nil else { throw WireFailure("histogram \(family) has a native span offset out of range") }
            guard span.length <= UInt64(deltas.count - next) else { throw WireFailure("histogram \(family) has native spans longer than its deltas") }
            index = number == 0 ? span.offset : index + span.offset + 1
            for step in 0..<Int64(span.length) {
                let (sum, overflow) = count.addingReportingOverflow(deltas[next])
                guard !overflow, sum >= 0 else { throw WireFailure("histogram \(family) has a negative native bucket count") }
                guard let bucket = Int32(exactly: index + step) else { throw WireFailure("histogram \(family) has a native bucket index out of range") }
                count = sum
                buckets.append(.init(index: bucket, count: UInt64(count)))
                next += 1
            }
            if span.length > 0 { index += Int64(span.length) - 1 }
        }
        guard next == deltas.count else { throw WireFailure("histogram \(family) has \(deltas.count) native deltas for \(next) buckets") }
        return buckets
    }

    /// About the bytes of one small value built while reading (a span, a quantile, a delta and its bucket).
    private static let builtSize = 16

    /// `labels` with the added ones first; a name already there is kept as `exported_<name>`.
    private static func relabel(_ labels: [(String, String)], adding added: [(String, String)]) -> [(String, String)] {
        guard labels.contains(where: { label in added.contains { $0.0 == label.0 } }) else { return added + labels }
        var taken = Set(labels.map(\.0))
        taken.formUnion(added.map(\.0))
        let addedNames = Set(added.map(\.0))
        return added + labels.map { label in
            guard addedNames.contains(label.0) else { return label }
            var name = "exported_" + label.0
            while taken.contains(name) { name = "exported_" + name }
            taken.insert(name)
            return (name, label.1)
        }
    }

    /// One string per label set, whatever the labels' order: each name and value with its length.
    private static func seriesKey(_ labels: [(String, String)]) -> String {
        var key = ""
        let sorted = labels.count < 2 || zip(labels, labels.dropFirst()).allSatisfy({ $0.0 < $1.0 }) ? labels : labels.sorted { $0.0 < $1.0 }
        for (name, value) in sorted {
            key += name
            key += "=\(value.utf8.count):"
            key += value
        }
        return key
    }

    /// A name as reasons show it: at most 200 bytes of it (a name may be megabytes long).
    private static func shown(_ name: String) -> String {
        name.utf8.count <= 200 ? name : String(decoding: name.utf8.prefix(200), as: UTF8.self) + "…"
    }

    private static func text(_ bytes: UnsafeRawBufferPointer, _ what: String) throws(WireFailure) -> String {
        guard UTF8Validation.firstInvalidOffset(bytes.bindMemory(to: UInt8.self)) == nil else { throw WireFailure("a \(what) is not UTF-8") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
