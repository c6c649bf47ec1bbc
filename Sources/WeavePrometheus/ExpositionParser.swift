/// Reads an exposition another process rendered (Prometheus text 0.0.4 or OpenMetrics 1.0) back
/// into families, so it can be merged with others and rendered again in either format. Sample
/// lines are kept as bytes (`MetricFamily.preformatted`), with labels added in front of theirs;
/// timestamps, exemplars and `_created` samples are left out (the merged exposition is fresh).
///
/// It is strict: a line that is not valid exposition syntax, a sample outside the family its TYPE
/// line opened, or a type other than counter, gauge, histogram and summary rejects the whole input
/// with its line number. Nothing is guessed.
public enum ExpositionParser {
    /// Why an exposition was rejected, and on which line (1-based).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let line: Int
        public let message: String

        public var description: String { "line \(line): \(message)" }
    }

    /// The families of `bytes`. `labels` go first in every sample's label set; a label of the same
    /// name already there is kept as `exported_<name>`, as Prometheus does.
    public static func parse(_ bytes: [UInt8], adding labels: [(String, String)] = []) throws(Failure) -> [MetricFamily] {
        var prefix: [UInt8] = []
        for (index, label) in labels.enumerated() {
            if index > 0 { prefix.append(UInt8(ascii: ",")) }
            prefix += Array(label.0.utf8) + Array("=\"".utf8) + escapeLabelValue(label.1) + [UInt8(ascii: "\"")]
        }
        var reader = Reader(bytes: bytes, prefix: prefix, added: labels.map { Array($0.0.utf8) })
        return try reader.run()
    }

    static func escapeLabelValue(_ value: String) -> [UInt8] {
        var out: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\n"): out += Array("\\n".utf8)
            default: out.append(byte)
            }
        }
        return out
    }

    private struct Reader {
        let bytes: [UInt8]
        let prefix: [UInt8]
        let added: [[UInt8]]
        var families: [MetricFamily] = []
        var lineNumber = 0
        /// HELP and UNIT lines seen before their TYPE line, by family name.
        var pendingHelp: [String: String] = [:]
        var pendingUnit: [String: String] = [:]
        var seen: Set<String> = []

        init(bytes: [UInt8], prefix: [UInt8], added: [[UInt8]]) {
            self.bytes = bytes
            self.prefix = prefix
            self.added = added
        }

        func fail(_ message: String) -> Failure { Failure(line: lineNumber, message: message) }

        mutating func run() throws(Failure) -> [MetricFamily] {
            var start = 0
            var ended = false
            // The open family's sample lines, written in place and handed over when a comment line begins.
            var pending: [UInt8] = []
            pending.reserveCapacity(bytes.count + bytes.count / 4)
            func flush(_ families: inout [MetricFamily]) {
                guard !pending.isEmpty else { return }
                families[families.count - 1].preformatted += pending
                pending.removeAll(keepingCapacity: true)
            }
            while start < bytes.count {
                lineNumber += 1
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                if ended { throw fail("text after # EOF") }
                if end > start {
                    if bytes[start] == UInt8(ascii: "#") {
                        flush(&families)
                        ended = try comment(start, end)
                    } else {
                        try sample(start, end, into: &pending)
                    }
                }
                start = end + 1
            }
            flush(&families)
            return families
        }

        /// `# HELP`, `# TYPE`, `# UNIT`, `# EOF`; other comments are skipped. Returns whether it was `# EOF`.
        mutating func comment(_ start: Int, _ end: Int) throws(Failure) -> Bool {
            let line = bytes[start..<end]
            let words = line.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: true)
            guard words.count >= 2, words[0].elementsEqual("#".utf8) else { return false }
            let keyword = String(decoding: words[1], as: UTF8.self)
            if keyword == "EOF" { return true }
            guard ["HELP", "TYPE", "UNIT"].contains(keyword) else { return false }
            guard words.count >= 3 else { throw fail("# \(keyword) without a metric name") }
            let name = String(decoding: words[2], as: UTF8.self)
            guard Reader.isMetricName(words[2]) else { throw fail("invalid metric name '\(name)'") }
            let rest = words.count > 3 ? String(decoding: words[3], as: UTF8.self) : ""
            switch keyword {
            case "HELP":
                if let last = families.last, last.name == name || last.name + "_total" == name {
                    families[families.count - 1].help = Reader.unescapeHelp(rest)
                } else {
                    pendingHelp[name] = Reader.unescapeHelp(rest)
                }
            case "UNIT":
                if let last = families.last, last.name == name { families[families.count - 1].unit = rest.isEmpty ? nil : rest } else { pendingUnit[name] = rest }
            default:
                let kind: MetricFamily.Kind
                switch rest {
                case "counter": kind = .counter
                case "gauge": kind = .gauge
                case "histogram": kind = .histogram
                case "summary": kind = .summary
                default: throw fail("type '\(rest)' of \(name) is not supported (counter, gauge, histogram, summary)")
                }
                // The text format names a counter family as its samples are named; OpenMetrics without `_total`.
                var family = name
                if kind == .counter, family.hasSuffix("_total") { family.removeLast("_total".count) }
                guard seen.insert(family).inserted else { throw fail("a second TYPE line for \(family)") }
                let help = pendingHelp.removeValue(forKey: name) ?? pendingHelp.removeValue(forKey: family) ?? ""
                let unit = pendingUnit.removeValue(forKey: family)
                families.append(MetricFamily(name: family, kind: kind, help: help, unit: unit))
            }
            return false
        }

        /// `name{labels} value [timestamp] [# exemplar]`, appended to `out` as `name{prefix,labels} value`.
        func sample(_ start: Int, _ end: Int, into out: inout [UInt8]) throws(Failure) {
            var cursor = start
            while cursor < end, Reader.isNameByte(bytes[cursor], first: cursor == start) { cursor += 1 }
            let nameEnd = cursor
            guard nameEnd > start else { throw fail("a sample must begin with a metric name") }
            guard let family = families.last else {
                throw fail("sample \(String(decoding: bytes[start..<nameEnd], as: UTF8.self)) has no TYPE line before it")
            }
            let suffix = bytes[start..<nameEnd].dropFirst(family.name.utf8.count)
            guard bytes[start..<nameEnd].starts(with: family.name.utf8), Reader.allowed(suffix, for: family.kind) else {
                throw fail("sample \(String(decoding: bytes[start..<nameEnd], as: UTF8.self)) is outside family \(family.name)")
            }
            if suffix.elementsEqual("_created".utf8) { return }
            out += bytes[start..<nameEnd]
            out.append(UInt8(ascii: "{"))
            let labelStart = out.count
            out += prefix
            if cursor < end, bytes[cursor] == UInt8(ascii: "{") {
                cursor = try labelSet(from: cursor + 1, end: end, into: &out, labelStart: labelStart)
            }
            if out.count == labelStart { out.removeLast() } else { out.append(UInt8(ascii: "}")) }
            guard cursor < end, bytes[cursor] == UInt8(ascii: " ") else { throw fail("expected a space and a value after the labels") }
            while cursor < end, bytes[cursor] == UInt8(ascii: " ") { cursor += 1 }
            let valueStart = cursor
            while cursor < end, bytes[cursor] != UInt8(ascii: " ") { cursor += 1 }
            guard Reader.isValue(bytes[valueStart..<cursor]) else {
                throw fail("'\(String(decoding: bytes[valueStart..<cursor], as: UTF8.self))' is not a sample value")
            }
            out.append(UInt8(ascii: " "))
            out += bytes[valueStart..<cursor]
            out.append(UInt8(ascii: "\n"))
        }

        /// Copies a label set after `{` into `out` (comma-separated after what follows `labelStart`),
        /// renaming a label that the prefix adds; returns the index after `}`.
        func labelSet(from start: Int, end: Int, into out: inout [UInt8], labelStart: Int) throws(Failure) -> Int {
            var cursor = start
            while true {
                guard cursor < end else { throw fail("unterminated label set") }
                if bytes[cursor] == UInt8(ascii: "}") { return cursor + 1 }
                let nameStart = cursor
                while cursor < end, Reader.isNameByte(bytes[cursor], first: cursor == nameStart), bytes[cursor] != UInt8(ascii: ":") { cursor += 1 }
                guard cursor > nameStart, cursor + 1 < end, bytes[cursor] == UInt8(ascii: "="), bytes[cursor + 1] == UInt8(ascii: "\"") else {
                    throw fail("a label must be name=\"value\"")
                }
                let name = bytes[nameStart..<cursor]
                if out.count > labelStart { out.append(UInt8(ascii: ",")) }
                if added.contains(where: { $0.elementsEqual(name) }) { out.append(contentsOf: "exported_".utf8) }
                out += name
                out.append(UInt8(ascii: "="))
                out.append(UInt8(ascii: "\""))
                cursor += 2
                let valueStart = cursor
                while true {
                    guard cursor < end else { throw fail("unterminated label value") }
                    let byte = bytes[cursor]
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\") {
                        guard cursor + 1 < end, [UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "n")].contains(bytes[cursor + 1]) else {
                            throw fail("invalid escape in a label value")
                        }
                        cursor += 1
                    }
                    cursor += 1
                }
                out += bytes[valueStart..<cursor]
                out.append(UInt8(ascii: "\""))
                cursor += 1
                guard cursor < end else { throw fail("unterminated label set") }
                if bytes[cursor] == UInt8(ascii: ",") { cursor += 1 } else if bytes[cursor] != UInt8(ascii: "}") {
                    throw fail("expected , or } after a label value")
                }
            }
        }

        static func allowed(_ suffix: ArraySlice<UInt8>, for kind: MetricFamily.Kind) -> Bool {
            let text = String(decoding: suffix, as: UTF8.self)
            switch kind {
            case .gauge: return text.isEmpty
            case .counter: return text == "_total" || text == "_created" || text.isEmpty
            case .histogram: return ["_bucket", "_sum", "_count", "_created"].contains(text)
            case .summary: return ["", "_sum", "_count", "_created"].contains(text)
            }
        }

        static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"): return true
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return !first
            default: return false
            }
        }

        static func isMetricName(_ bytes: ArraySlice<UInt8>) -> Bool {
            !bytes.isEmpty && bytes.enumerated().allSatisfy { isNameByte($0.element, first: $0.offset == 0) }
        }

        /// A sample value: a decimal number (with exponent), `+Inf`, `-Inf` or `NaN`.
        static func isValue(_ bytes: ArraySlice<UInt8>) -> Bool {
            if bytes.elementsEqual("+Inf".utf8) || bytes.elementsEqual("-Inf".utf8) || bytes.elementsEqual("NaN".utf8) { return true }
            var digits = 0
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"): continue
                default: return false
                }
            }
            return digits > 0 && Double(String(decoding: bytes, as: UTF8.self)) != nil
        }

        static func unescapeHelp(_ text: String) -> String {
            guard text.contains("\\") else { return text }
            var out = ""
            var escaping = false
            for character in text {
                if escaping {
                    out.append(character == "n" ? "\n" : character)
                    escaping = false
                } else if character == "\\" {
                    escaping = true
                } else {
                    out.append(character)
                }
            }
            return out
        }
    }
}
