import WeaveSupport

/// Renders metric families in Prometheus's protobuf exposition: delimited `io.prometheus.client.MetricFamily`
/// messages (each its length as a varint, then the message), the format that carries native
/// histograms. Families are sorted and grouped by name as `Exposition` does; a counter family is
/// named with `_total`, as its series are. A histogram series with a native histogram gets its
/// exponential buckets, and its classic buckets only when it has more than `+Inf`. Preformatted lines
/// (another process's series) are read back into samples. Written by hand: four message types and
/// a dozen fields do not need swift-protobuf's runtime.
public enum ProtobufExposition {
    /// The `Content-Type` of the format.
    public static let contentType = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"

    /// Whether a `Content-Type` names this format: nil when it is not protobuf at all, false when it
    /// is protobuf of another message or encoding (parameters compared whole, not by prefix).
    public static func names(_ contentType: String) -> Bool? {
        let parts = contentType.split(separator: ";").map { $0.trimmingWhitespace() }
        guard parts.first?.lowercased() == "application/vnd.google.protobuf" else { return nil }
        var parameters: [String: String] = [:]
        for part in parts.dropFirst() {
            guard let equals = part.firstIndex(of: "=") else { return false }
            var value = part[part.index(after: equals)...]
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            parameters[part[..<equals].lowercased()] = String(value)
        }
        return parameters["proto"] == "io.prometheus.client.MetricFamily" && parameters["encoding"] == "delimited"
    }

    /// The `MetricType` numbers of the proto.
    enum MetricType: UInt64 {
        case counter = 0, gauge = 1, summary = 2, untyped = 3, histogram = 4, gaugeHistogram = 5
    }

    /// The exposition of `families`.
    public static func render(_ families: [MetricFamily]) -> [UInt8] {
        var out = ProtobufWire.Writer()
        out.bytes.reserveCapacity(Exposition.estimatedSize(families) / 2)
        for group in Exposition.grouped(families) {
            let family = group[0]
            // The bounds of every `le` label, read once for all the series that share them.
            var bounds: (labels: [String], values: [Double?]) = ([], [])
            out.message(nil) { message in
                message.string(1, family.kind == .counter ? family.name + "_total" : family.name)
                message.string(2, family.help)
                message.uint64(3, metricType(family.kind).rawValue)
                for member in group {
                    writeSamples(&message, kind: family.kind, member.samples.map { ($0.suffix, $0.labels, $0.value) })
                    for series in member.histograms { writeHistogram(&message, series, bounds: &bounds) }
                    let decoded = member.preformatted.samples.map { sample in
                        (String(sample.name.dropFirst(family.name.count)), sample.labels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                         sample.value)
                    }
                    writeSamples(&message, kind: family.kind, decoded)
                }
                if let unit = group.lazy.compactMap(\.unit).first { message.string(5, unit) }
            }
        }
        return out.bytes
    }

    static func metricType(_ kind: MetricFamily.Kind) -> MetricType {
        switch kind {
        case .counter: return .counter
        case .gauge: return .gauge
        case .summary: return .summary
        case .histogram: return .histogram
        }
    }

    /// Samples as `Metric` messages: one each for counters and gauges; one per series (its labels
    /// without `quantile` or `le`) for summaries and histograms, in the order their series first appear.
    private static func writeSamples(_ out: inout ProtobufWire.Writer, kind: MetricFamily.Kind,
                                     _ samples: [(suffix: String, labels: [(String, String)], value: Double)]) {
        switch kind {
        case .counter, .gauge:
            for sample in samples {
                out.message(4) { metric in
                    writeLabels(&metric, sample.labels)
                    metric.message(kind == .counter ? 3 : 2) { $0.double(1, sample.value) }
                }
            }
        case .summary, .histogram:
            let special = kind == .summary ? "quantile" : "le"
            // A series' samples are usually together: the last one is checked before the index.
            var series: [(labels: [(String, String)], points: [(Double, Double)], sum: Double, count: Double)] = []
            var index: [[String]: Int] = [:]
            for sample in samples {
                let labels = sample.labels.filter { $0.0 != special }
                let position: Int
                if let last = series.last, last.labels.elementsEqual(labels, by: { $0 == $1 }) {
                    position = series.count - 1
                } else {
                    let key = labels.flatMap { [$0.0, $0.1] }
                    if let known = index[key] {
                        position = known
                    } else {
                        position = series.count
                        index[key] = position
                        series.append((labels, [], 0, 0))
                    }
                }
                switch sample.suffix {
                case "_sum": series[position].sum = sample.value
                case "_count": series[position].count = sample.value
                default:
                    guard let point = sample.labels.first(where: { $0.0 == special }).flatMap({ number($0.1) }) else { continue }
                    series[position].points.append((point, sample.value))
                }
            }
            for one in series {
                out.message(4) { metric in
                    writeLabels(&metric, one.labels)
                    if kind == .summary {
                        metric.message(4) { summary in
                            summary.uint64(1, Self.count(one.count))
                            summary.double(2, one.sum)
                            for (quantile, value) in one.points {
                                summary.message(3) { $0.double(1, quantile); $0.double(2, value) }
                            }
                        }
                    } else {
                        metric.message(7) { histogram in
                            histogram.uint64(1, Self.count(one.count))
                            histogram.double(2, one.sum)
                            for (bound, cumulative) in one.points where bound.isFinite {
                                histogram.message(3) { $0.uint64(1, Self.count(cumulative)); $0.double(2, bound) }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A count as protobuf's uint64. The parser refuses a count that is not one (`SeriesRules`); a
    /// value no reader let through is the largest count, never a trap.
    private static func count(_ value: Double) -> UInt64 {
        UInt64(checked: value) ?? (value > 0 ? .max : 0)
    }

    /// One histogram series: its count and sum, its classic buckets (cumulative, `+Inf` left out:
    /// the count is its count) when it has more than `+Inf`, and its native histogram.
    private static func writeHistogram(_ out: inout ProtobufWire.Writer, _ series: MetricFamily.HistogramSeries,
                                       bounds: inout (labels: [String], values: [Double?])) {
        out.message(4) { metric in
            writeLabels(&metric, series.labels)
            metric.message(7) { histogram in
                histogram.uint64(1, series.count)
                histogram.double(2, series.sum)
                if series.bucketLabels.count > 1 {
                    if series.bucketLabels != bounds.labels {
                        bounds = (series.bucketLabels, series.bucketLabels.map { $0 == "+Inf" ? nil : Double($0) })
                    }
                    var cumulative: UInt64 = 0
                    for (bound, count) in zip(bounds.values, series.bucketCounts) {
                        cumulative &+= count
                        guard let bound else { continue }
                        histogram.message(3) { $0.uint64(1, cumulative); $0.double(2, bound) }
                    }
                }
                guard let native = series.native else { return }
                histogram.sint(5, Int64(native.schema))
                histogram.double(6, native.zeroThreshold)
                histogram.uint64(7, native.zeroCount)
                writeBuckets(&histogram, native.negative, spanField: 9, deltaField: 10)
                // An empty native histogram still needs a span, or it reads as a classic one.
                writeBuckets(&histogram, native.positive, spanField: 12, deltaField: 13,
                             noOpSpan: native.positive.isEmpty && native.negative.isEmpty)
            }
        }
    }

    /// Buckets as spans (runs of consecutive indices; each offset is the gap from the previous run)
    /// and packed deltas (each count less the one before it).
    private static func writeBuckets(_ out: inout ProtobufWire.Writer, _ buckets: [NativeHistogram.Bucket],
                                     spanField: Int, deltaField: Int, noOpSpan: Bool = false) {
        if noOpSpan { out.message(spanField) { $0.sint(1, 0); $0.uint64(2, 0) } }
        guard !buckets.isEmpty else { return }
        var spans: [(offset: Int64, length: UInt64)] = []
        var previous: Int32?
        for bucket in buckets {
            if let last = previous, bucket.index == last + 1 {
                spans[spans.count - 1].length += 1
            } else {
                spans.append((previous.map { Int64(bucket.index) - Int64($0) - 1 } ?? Int64(bucket.index), 1))
            }
            previous = bucket.index
        }
        for span in spans { out.message(spanField) { $0.sint(1, span.offset); $0.uint64(2, span.length) } }
        out.message(deltaField) { packed in
            var last: Int64 = 0
            for bucket in buckets {
                let count = Int64(clamping: bucket.count)
                packed.varint(ProtobufWire.zigzag(count &- last))
                last = count
            }
        }
    }

    /// A `le` or `quantile` label's number, `+Inf` included.
    private static func number(_ text: String) -> Double? {
        text == "+Inf" ? .infinity : Double(text)
    }

    private static func writeLabels(_ out: inout ProtobufWire.Writer, _ labels: [(String, String)]) {
        for (name, value) in labels {
            out.message(1) { $0.string(1, name); $0.string(2, value) }
        }
    }
}
