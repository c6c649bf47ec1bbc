import WeaveSupport

/// Renders metric families in the Prometheus text format 0.0.4 or OpenMetrics 1.0: families sorted
/// by name, samples in a stable order, every family with HELP and TYPE, names and label values escaped.
public enum Exposition {
    public enum Format: Sendable, CaseIterable {
        case prometheusText
        case openMetrics
        /// Delimited protobuf `MetricFamily` messages (`ProtobufExposition`): the only one that
        /// carries native histograms.
        case protobuf

        /// The `Content-Type` of the format.
        public var contentType: String {
            switch self {
            case .prometheusText: return "text/plain; version=0.0.4; charset=utf-8"
            case .openMetrics: return "application/openmetrics-text; version=1.0.0; charset=utf-8"
            case .protobuf: return ProtobufExposition.contentType
            }
        }

        /// The format the `Accept` header prefers (the highest `q`, the first of equals): protobuf
        /// for `application/vnd.google.protobuf` with `proto=io.prometheus.client.MetricFamily` and
        /// `encoding=delimited`, OpenMetrics for `application/openmetrics-text`, the text format for
        /// `text/plain`, `*/*`, anything else, or no header.
        public static func negotiate(accept: String?) -> Format {
            guard let accept else { return .prometheusText }
            var best: (format: Format, quality: Double)?
            for part in accept.split(separator: ",") {
                let fields = part.split(separator: ";").map { $0.trimmingWhitespace() }
                let parameters = fields.dropFirst()
                let format: Format
                switch fields.first?.lowercased() {
                case "application/vnd.google.protobuf":
                    guard parameters.contains("proto=io.prometheus.client.MetricFamily"), parameters.contains("encoding=delimited") else { continue }
                    format = .protobuf
                case "application/openmetrics-text": format = .openMetrics
                case "text/plain", "*/*": format = .prometheusText
                default: continue
                }
                let quality = parameters.first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
                if quality > 0, quality > best?.quality ?? 0 { best = (format, quality) }
            }
            return best?.format ?? .prometheusText
        }
    }

    /// The exposition of `families` (UTF-8 bytes in the text formats). Families that share a name are written as one
    /// (one HELP and TYPE, the first family's): their series are concatenated when they are of the same
    /// kind, and a later family of another kind is left out. Series must differ by their labels (an
    /// `app` label, say) across families of one name.
    public static func render(_ families: [MetricFamily], format: Format) -> [UInt8] {
        if format == .protobuf { return ProtobufExposition.render(families) }
        var out: [UInt8] = []
        out.reserveCapacity(estimatedSize(families))
        render(families, format: format, into: &out, chunkSize: .max) { _ in }
        return out
    }

    /// The same exposition, handed to `write` in pieces (each valid during the call only): about
    /// `chunkSize` bytes of lines rendered here, and the preformatted lines of parsed families as
    /// they are, so a large exposition is copied once, into the caller's buffer.
    public static func render(_ families: [MetricFamily], format: Format, chunkSize: Int = 1 << 16,
                              write: (UnsafeRawBufferPointer) -> Void) {
        if format == .protobuf { return ProtobufExposition.render(families).withUnsafeBytes(write) }
        var out: [UInt8] = []
        out.reserveCapacity(chunkSize + 4_096)
        render(families, format: format, into: &out, chunkSize: chunkSize, write: write)
        out.withUnsafeBytes(write)
    }

    /// Renders into `out`, handing it to `write` (and emptying it) whenever it holds `chunkSize`
    /// bytes; preformatted lines that would fill it go to `write` directly, after `out`.
    private static func render(_ families: [MetricFamily], format: Format, into out: inout [UInt8], chunkSize: Int,
                               write: (UnsafeRawBufferPointer) -> Void) {
        for group in grouped(families) {
            let family = group[0]
            // The text format names a counter family as its samples are named; OpenMetrics drops `_total`.
            let familyName = format == .prometheusText && family.kind == .counter ? family.name + "_total" : family.name
            out.append(contentsOf: "# HELP ".utf8)
            out.append(contentsOf: familyName.utf8)
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: escapeHelp(family.help).utf8)
            out.append(contentsOf: "\n# TYPE ".utf8)
            out.append(contentsOf: familyName.utf8)
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: family.kind.rawValue.utf8)
            out.append(UInt8(ascii: "\n"))
            if format == .openMetrics, let unit = group.lazy.compactMap(\.unit).first {
                out.append(contentsOf: "# UNIT ".utf8)
                out.append(contentsOf: familyName.utf8)
                out.append(UInt8(ascii: " "))
                out.append(contentsOf: unit.utf8)
                out.append(UInt8(ascii: "\n"))
            }
            let name = Array(family.name.utf8)
            // `le="…"} ` of every bucket, made once for all the series that share their bounds.
            var bucketEnds: (labels: [String], bytes: [[UInt8]]) = ([], [])
            for member in group {
                for sample in member.samples {
                    out.append(contentsOf: name)
                    out.append(contentsOf: sample.suffix.utf8)
                    if !sample.labels.isEmpty {
                        out.append(UInt8(ascii: "{"))
                        appendLabels(&out, sample.labels)
                        out.append(UInt8(ascii: "}"))
                    }
                    out.append(UInt8(ascii: " "))
                    appendValue(&out, sample.value)
                    out.append(UInt8(ascii: "\n"))
                    if out.count >= chunkSize { flush(&out, write) }
                }
                for series in member.histograms {
                    appendHistogram(&out, name: name, series, bucketEnds: &bucketEnds)
                    if out.count >= chunkSize { flush(&out, write) }
                }
                if out.count + member.preformatted.count < chunkSize {
                    member.preformatted.withUnsafeBytes { out.append(contentsOf: $0) }
                } else {
                    flush(&out, write)
                    member.preformatted.withUnsafeBytes(write)
                }
            }
        }
        if format == .openMetrics { out.append(contentsOf: "# EOF\n".utf8) }
    }

    private static func flush(_ out: inout [UInt8], _ write: (UnsafeRawBufferPointer) -> Void) {
        out.withUnsafeBytes(write)
        out.removeAll(keepingCapacity: true)
    }

    /// `families` sorted by name (stable) and grouped by name: the first of a group gives HELP, TYPE
    /// and kind; a later family of another kind is left out. Nothing is copied.
    static func grouped(_ families: [MetricFamily]) -> [[MetricFamily]] {
        var groups: [[MetricFamily]] = []
        groups.reserveCapacity(families.count)
        for family in families.enumerated().sorted(by: { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }).map(\.element) {
            guard let first = groups.last?.first, first.name == family.name else {
                groups.append([family])
                continue
            }
            if first.kind == family.kind { groups[groups.count - 1].append(family) }
        }
        return groups
    }

    /// The `_bucket` lines (cumulative, `+Inf` last), `_sum` and `_count` of one histogram series.
    /// The text up to the `le` value is built once per series, then copied for every bucket.
    private static func appendHistogram(_ out: inout [UInt8], name: [UInt8], _ series: MetricFamily.HistogramSeries,
                                        bucketEnds: inout (labels: [String], bytes: [[UInt8]])) {
        if series.bucketLabels != bucketEnds.labels {
            bucketEnds = (series.bucketLabels, series.bucketLabels.map { Array("\($0)\"} ".utf8) })
        }
        var labels: [UInt8] = []
        appendLabels(&labels, series.labels)
        var bucketPrefix = name
        bucketPrefix.append(contentsOf: "_bucket{".utf8)
        bucketPrefix.append(contentsOf: labels)
        if !labels.isEmpty { bucketPrefix.append(UInt8(ascii: ",")) }
        bucketPrefix.append(contentsOf: "le=\"".utf8)
        var cumulative: UInt64 = 0
        for (end, count) in zip(bucketEnds.bytes, series.bucketCounts) {
            cumulative &+= count
            out.append(contentsOf: bucketPrefix)
            out.append(contentsOf: end)
            appendValue(&out, Double(cumulative))
            out.append(UInt8(ascii: "\n"))
        }
        for (suffix, value) in [("_sum", series.sum), ("_count", Double(cumulative))] {
            out.append(contentsOf: name)
            out.append(contentsOf: suffix.utf8)
            if !labels.isEmpty {
                out.append(UInt8(ascii: "{"))
                out.append(contentsOf: labels)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: " "))
            appendValue(&out, value)
            out.append(UInt8(ascii: "\n"))
        }
    }

    /// `key="value",…` without braces (also the labels `ExpositionParser` adds).
    static func appendLabels(_ out: inout [UInt8], _ labels: [(String, String)]) {
        for (index, label) in labels.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: label.0.utf8)
            out.append(contentsOf: "=\"".utf8)
            appendEscapedLabel(&out, label.1)
            out.append(UInt8(ascii: "\""))
        }
    }

    /// About the bytes `families` render to in the text formats, so the output is allocated once (and
    /// 16 a native bucket: the size a parsed protobuf answer is counted at).
    public static func estimatedSize(_ families: [MetricFamily]) -> Int {
        families.reduce(0) { $0 + estimatedSize($1) }
    }

    private static func estimatedSize(_ family: MetricFamily) -> Int {
        let name = family.name.utf8.count
        var size = 2 * name + family.help.utf8.count + 40
        for sample in family.samples { size += estimatedSize(sample, name: name) }
        for series in family.histograms { size += estimatedSize(series, name: name) }
        return size + family.preformatted.count
    }

    /// About the bytes of one sample line of a family whose name has `name` bytes.
    static func estimatedSize(_ sample: MetricFamily.Sample, name: Int) -> Int {
        name + sample.suffix.utf8.count + sample.labels.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 } + 24
    }

    /// About the bytes of one histogram series' lines, and 16 a native bucket.
    static func estimatedSize(_ series: MetricFamily.HistogramSeries, name: Int) -> Int {
        let line = name + series.labels.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 } + 40
        return line * (series.bucketCounts.count + 2) + 16 * ((series.native?.positive.count ?? 0) + (series.native?.negative.count ?? 0))
    }

    /// A label value with backslash, double quote and line feed escaped, appended without copies
    /// when there is nothing to escape.
    private static func appendEscapedLabel(_ out: inout [UInt8], _ text: String) {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\n") {
                return false
            }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true { return }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
            default: out.append(byte)
            }
        }
    }

    /// Integers digit by digit (no String in between); other values as `formatValue` spells them.
    private static func appendValue(_ out: inout [UInt8], _ value: Double) {
        guard value == value.rounded(), abs(value) < 1e15 else {
            out.append(contentsOf: formatValue(value).utf8)
            return
        }
        var integer = Int64(value)
        if integer < 0 {
            out.append(UInt8(ascii: "-"))
            integer = -integer
        }
        if integer == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while integer > 0 {
                buffer[count] = UInt8(truncatingIfNeeded: integer % 10) + UInt8(ascii: "0")
                integer /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[index]) }
        }
    }

    /// HELP text: backslash and line feed escaped, byte by byte (a line feed inside a `\r\n`
    /// grapheme too, which a walk over `Character`s would miss and leave raw in the exposition).
    private static func escapeHelp(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\n") }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out += "\\\\".utf8
            case UInt8(ascii: "\n"): out += "\\n".utf8
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Integers without a fraction, `+Inf`/`-Inf`/`NaN` spelled as both formats expect.
    private static func formatValue(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// A metric name made valid: `[a-zA-Z_:][a-zA-Z0-9_:]*`, other characters replaced by `_`.
    public static func sanitizeName(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            let isLetter = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_" || scalar == ":"
            let isDigit = ("0"..."9").contains(scalar)
            out.unicodeScalars.append(isLetter || (isDigit && !out.isEmpty) ? scalar : "_")
        }
        return out.isEmpty ? "_" : out
    }
}
