import SwiftProtobuf
import WeavePrometheus

/// The protobuf exposition made with swift-protobuf's generated messages (metrics.pb.swift): the
/// peer of WeavePrometheus's hand-written `ProtobufExposition` and `ProtobufParser`, for the same
/// families and the same bytes.
public enum SwiftProtobufExposition {
    /// Delimited `MetricFamily` messages of `families` (grouped by name as the daemon renders them).
    public static func render(_ families: [MetricFamily]) throws -> [UInt8] {
        var out: [UInt8] = []
        for family in families {
            var message = Io_Prometheus_Client_MetricFamily()
            message.name = family.kind == .counter ? family.name + "_total" : family.name
            message.help = family.help
            if let unit = family.unit { message.unit = unit }
            switch family.kind {
            case .counter:
                message.type = .counter
                message.metric = family.samples.map { sample in
                    var metric = Io_Prometheus_Client_Metric()
                    metric.label = labels(sample.labels)
                    metric.counter.value = sample.value
                    return metric
                }
            case .gauge:
                message.type = .gauge
                message.metric = family.samples.map { sample in
                    var metric = Io_Prometheus_Client_Metric()
                    metric.label = labels(sample.labels)
                    metric.gauge.value = sample.value
                    return metric
                }
            case .summary:
                message.type = .summary
                message.metric = summaries(family.samples)
            case .histogram:
                message.type = .histogram
                message.metric = family.histograms.map(histogram)
            }
            let bytes: [UInt8] = try message.serializedBytes()
            var length = UInt64(bytes.count)
            while length >= 0x80 {
                out.append(UInt8(truncatingIfNeeded: length) | 0x80)
                length >>= 7
            }
            out.append(UInt8(length))
            out += bytes
        }
        return out
    }

    /// The messages of a delimited stream, parsed.
    public static func parse(_ bytes: [UInt8]) throws -> [Io_Prometheus_Client_MetricFamily] {
        var messages: [Io_Prometheus_Client_MetricFamily] = []
        var offset = 0
        while offset < bytes.count {
            var length = 0, shift = 0
            while true {
                let byte = bytes[offset]
                offset += 1
                length |= Int(byte & 0x7f) << shift
                shift += 7
                if byte < 0x80 { break }
            }
            messages.append(try Io_Prometheus_Client_MetricFamily(serializedBytes: bytes[offset..<offset + length]))
            offset += length
        }
        return messages
    }

    private static func labels(_ pairs: [(String, String)]) -> [Io_Prometheus_Client_LabelPair] {
        pairs.map { pair in
            var label = Io_Prometheus_Client_LabelPair()
            label.name = pair.0
            label.value = pair.1
            return label
        }
    }

    /// One metric per series: its quantile samples, then `_sum` and `_count` (as `ContainerMetrics` lists them).
    private static func summaries(_ samples: [MetricFamily.Sample]) -> [Io_Prometheus_Client_Metric] {
        var metrics: [Io_Prometheus_Client_Metric] = []
        var current = Io_Prometheus_Client_Metric()
        for sample in samples {
            switch sample.suffix {
            case "_sum": current.summary.sampleSum = sample.value
            case "_count":
                current.summary.sampleCount = UInt64(sample.value)
                metrics.append(current)
                current = Io_Prometheus_Client_Metric()
            default:
                current.label = labels(sample.labels.filter { $0.0 != "quantile" })
                var quantile = Io_Prometheus_Client_Quantile()
                quantile.quantile = Double(sample.labels.first { $0.0 == "quantile" }?.1 ?? "") ?? 0
                quantile.value = sample.value
                current.summary.quantile.append(quantile)
            }
        }
        return metrics
    }

    private static func histogram(_ series: MetricFamily.HistogramSeries) -> Io_Prometheus_Client_Metric {
        var metric = Io_Prometheus_Client_Metric()
        metric.label = labels(series.labels)
        var histogram = Io_Prometheus_Client_Histogram()
        histogram.sampleCount = series.count
        histogram.sampleSum = series.sum
        if series.bucketLabels.count > 1 {
            var cumulative: UInt64 = 0
            for (label, count) in zip(series.bucketLabels, series.bucketCounts) {
                cumulative &+= count
                guard label != "+Inf", let bound = Double(label) else { continue }
                var bucket = Io_Prometheus_Client_Bucket()
                bucket.cumulativeCount = cumulative
                bucket.upperBound = bound
                histogram.bucket.append(bucket)
            }
        }
        if let native = series.native {
            histogram.schema = native.schema
            histogram.zeroThreshold = native.zeroThreshold
            histogram.zeroCount = native.zeroCount
            var previous: Int32?
            var last: Int64 = 0
            for bucket in native.positive {
                if let index = previous, bucket.index == index + 1 {
                    histogram.positiveSpan[histogram.positiveSpan.count - 1].length += 1
                } else {
                    var span = Io_Prometheus_Client_BucketSpan()
                    span.offset = previous.map { bucket.index - $0 - 1 } ?? bucket.index
                    span.length = 1
                    histogram.positiveSpan.append(span)
                }
                previous = bucket.index
                histogram.positiveDelta.append(Int64(bucket.count) - last)
                last = Int64(bucket.count)
            }
            if native.positive.isEmpty { histogram.positiveSpan = [Io_Prometheus_Client_BucketSpan()] }
        }
        metric.histogram = histogram
        return metric
    }
}
