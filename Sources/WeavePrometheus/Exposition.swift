/// Renders metric families in the Prometheus text format 0.0.4 or OpenMetrics 1.0: families sorted
/// by name, samples in a stable order, every family with HELP and TYPE, names and label values escaped.
public enum Exposition {
    public enum Format: Sendable {
        case prometheusText
        case openMetrics

        /// The `Content-Type` of the format.
        public var contentType: String {
            switch self {
            case .prometheusText: return "text/plain; version=0.0.4; charset=utf-8"
            case .openMetrics: return "application/openmetrics-text; version=1.0.0; charset=utf-8"
            }
        }

        /// OpenMetrics when the `Accept` header asks for it, else the text format.
        public static func negotiate(accept: String?) -> Format {
            guard let accept else { return .prometheusText }
            for part in accept.split(separator: ",") {
                let fields = part.split(separator: ";").map { $0.trimmingSpaces() }
                guard fields.first == "application/openmetrics-text" else { continue }
                let quality = fields.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
                if quality > 0 { return .openMetrics }
            }
            return .prometheusText
        }
    }

    /// The exposition of `families` as UTF-8 bytes.
    public static func render(_ families: [MetricFamily], format: Format) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(families.reduce(0) { $0 + 64 * ($1.samples.count + 2) })
        for family in families.sorted(by: { $0.name < $1.name }) {
            // The text format names a counter family as its samples are named; OpenMetrics drops `_total`.
            let familyName = format == .prometheusText && family.kind == .counter ? family.name + "_total" : family.name
            append(&out, "# HELP ", familyName, " ", escapeHelp(family.help), "\n")
            append(&out, "# TYPE ", familyName, " ", family.kind.rawValue, "\n")
            if format == .openMetrics, let unit = family.unit { append(&out, "# UNIT ", familyName, " ", unit, "\n") }
            for sample in family.samples {
                append(&out, family.name, sample.suffix)
                if !sample.labels.isEmpty {
                    out.append(UInt8(ascii: "{"))
                    for (index, label) in sample.labels.enumerated() {
                        if index > 0 { out.append(UInt8(ascii: ",")) }
                        append(&out, label.0, "=\"", escapeLabel(label.1), "\"")
                    }
                    out.append(UInt8(ascii: "}"))
                }
                append(&out, " ", formatValue(sample.value), "\n")
            }
        }
        if format == .openMetrics { append(&out, "# EOF\n") }
        return out
    }

    private static func append(_ out: inout [UInt8], _ parts: String...) {
        for part in parts { out.append(contentsOf: part.utf8) }
    }

    /// HELP text: backslash and line feed escaped.
    static func escapeHelp(_ text: String) -> String {
        guard text.contains(where: { $0 == "\\" || $0 == "\n" }) else { return text }
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// Label values: backslash, double quote and line feed escaped.
    static func escapeLabel(_ text: String) -> String {
        guard text.contains(where: { $0 == "\\" || $0 == "\n" || $0 == "\"" }) else { return text }
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"": out += "\\\""
            default: out.append(character)
            }
        }
        return out
    }

    /// Integers without a fraction, `+Inf`/`-Inf`/`NaN` spelled as both formats expect.
    static func formatValue(_ value: Double) -> String {
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

extension Substring {
    func trimmingSpaces() -> Substring {
        var slice = self
        while slice.first == " " || slice.first == "\t" { slice = slice.dropFirst() }
        while slice.last == " " || slice.last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
