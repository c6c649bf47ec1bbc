import WeaveSupport

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
        Exposition.appendLabels(&prefix, labels)
        let added = labels.map { Array($0.0.utf8) }
        return try bytes.withUnsafeBufferPointer { buffer throws(Failure) in
            var reader = Reader(bytes: buffer, prefix: prefix, added: added)
            return try reader.run()
        }
    }

    /// One pass over the bytes, without allocating per sample: sample lines are copied into the open
    /// family's buffer with the labels added.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let prefix: [UInt8]
        let added: [[UInt8]]
        var families: [MetricFamily] = []
        var lineNumber = 0
        /// HELP and UNIT lines seen before their TYPE line, by family name.
        var pendingHelp: [String: String] = [:]
        var pendingUnit: [String: String] = [:]
        var seen: Set<String> = []
        /// The open family's name and the suffixes its samples may have.
        var familyName: [UInt8] = []
        var suffixes: [[UInt8]] = []

        init(bytes: UnsafeBufferPointer<UInt8>, prefix: [UInt8], added: [[UInt8]]) {
            self.bytes = bytes
            self.prefix = prefix
            self.added = added
        }

        func fail(_ message: String) -> Failure { Failure(line: lineNumber, message: message) }

        func text(_ start: Int, _ end: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }

        @inline(__always)
        func equal(_ start: Int, _ end: Int, _ other: [UInt8]) -> Bool {
            end - start == other.count && other.withUnsafeBufferPointer { memcmp(bytes.baseAddress! + start, $0.baseAddress!, other.count) == 0 }
        }

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
            guard let base = bytes.baseAddress else { return [] }
            while start < bytes.count {
                lineNumber += 1
                let end = memchr(base + start, 0x0A, bytes.count - start).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base }
                    ?? bytes.count
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
            let line = Array(bytes[start..<end])
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
                familyName = Array(family.utf8)
                suffixes = Reader.suffixes(of: kind).map { Array($0.utf8) }
            }
            return false
        }

        /// `name{labels} value [timestamp] [# exemplar]`, appended to `out` as `name{prefix,labels} value`.
        func sample(_ start: Int, _ end: Int, into out: inout [UInt8]) throws(Failure) {
            var cursor = start
            while cursor < end, Reader.isNameByte(bytes[cursor], first: cursor == start) { cursor += 1 }
            let nameEnd = cursor
            guard nameEnd > start else { throw fail("a sample must begin with a metric name") }
            guard !families.isEmpty else { throw fail("sample \(text(start, nameEnd)) has no TYPE line before it") }
            let suffixStart = start + familyName.count
            var suffix = -1
            if suffixStart <= nameEnd, equal(start, suffixStart, familyName) {
                for index in suffixes.indices where equal(suffixStart, nameEnd, suffixes[index]) {
                    suffix = index
                    break
                }
            }
            guard suffix >= 0 else { throw fail("sample \(text(start, nameEnd)) is outside family \(families[families.count - 1].name)") }
            if suffix == suffixes.count - 1, !suffixes[suffix].isEmpty, equal(suffixStart, nameEnd, Reader.created) { return }
            var labelsStart = -1 // after `{`, when there is a label set
            var renames = false
            if cursor < end, bytes[cursor] == UInt8(ascii: "{") {
                labelsStart = cursor + 1
                (cursor, renames) = try scanLabels(from: labelsStart, end: end)
            }
            guard cursor < end, bytes[cursor] == UInt8(ascii: " ") else { throw fail("expected a space and a value after the labels") }
            let labelsEnd = cursor // after `}`, or after the name
            while cursor < end, bytes[cursor] == UInt8(ascii: " ") { cursor += 1 }
            let valueStart = cursor
            while cursor < end, bytes[cursor] != UInt8(ascii: " ") { cursor += 1 }
            let value = UnsafeBufferPointer(rebasing: bytes[valueStart..<cursor])
            guard Reader.isValue(value) else { throw fail("'\(text(valueStart, cursor))' is not a sample value") }
            // A timestamp or exemplar after the value is left out; the rest is copied in as few pieces as it can be.
            if prefix.isEmpty {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<cursor]))
            } else if labelsStart < 0 || bytes[labelsStart] == UInt8(ascii: "}") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<nameEnd]))
                out.append(UInt8(ascii: "{"))
                out += prefix
                out.append(UInt8(ascii: "}"))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[labelsEnd..<cursor]))
            } else if !renames {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<labelsStart]))
                out += prefix
                out.append(UInt8(ascii: ","))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[labelsStart..<cursor]))
            } else {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<labelsStart]))
                out += prefix
                _ = try labelSet(from: labelsStart, end: end, into: &out, labelStart: out.count - prefix.count)
                out.append(UInt8(ascii: "}"))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[labelsEnd..<cursor]))
            }
            out.append(UInt8(ascii: "\n"))
        }

        /// Checks a label set after `{`; returns the index after `}`, and whether a label has a name
        /// the prefix adds (then `labelSet` copies it renamed).
        func scanLabels(from start: Int, end: Int) throws(Failure) -> (Int, Bool) {
            var cursor = start
            var renames = false
            guard let base = bytes.baseAddress else { throw fail("unterminated label set") }
            while true {
                guard cursor < end else { throw fail("unterminated label set") }
                if bytes[cursor] == UInt8(ascii: "}") { return (cursor + 1, renames) }
                let nameStart = cursor
                while cursor < end, Reader.isNameByte(bytes[cursor], first: cursor == nameStart), bytes[cursor] != UInt8(ascii: ":") { cursor += 1 }
                guard cursor > nameStart, cursor + 1 < end, bytes[cursor] == UInt8(ascii: "="), bytes[cursor + 1] == UInt8(ascii: "\"") else {
                    throw fail("a label must be name=\"value\"")
                }
                if !renames {
                    for name in added where equal(nameStart, cursor, name) { renames = true }
                }
                cursor += 2
                // The closing quote: the first one not escaped.
                while true {
                    guard cursor < end, let quote = memchr(base + cursor, Int32(UInt8(ascii: "\"")), end - cursor) else {
                        throw fail("unterminated label value")
                    }
                    let quoteIndex = UnsafePointer<UInt8>(quote.assumingMemoryBound(to: UInt8.self)) - base
                    if memchr(base + cursor, Int32(UInt8(ascii: "\\")), quoteIndex - cursor) == nil {
                        cursor = quoteIndex
                        break
                    }
                    // An escape before the quote: step over it and look again.
                    let escape = UnsafePointer<UInt8>(memchr(base + cursor, Int32(UInt8(ascii: "\\")), quoteIndex - cursor)!
                        .assumingMemoryBound(to: UInt8.self)) - base
                    guard escape + 1 < end, [UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "n")].contains(bytes[escape + 1]) else {
                        throw fail("invalid escape in a label value")
                    }
                    cursor = escape + 2
                }
                cursor += 1
                guard cursor < end else { throw fail("unterminated label set") }
                if bytes[cursor] == UInt8(ascii: ",") { cursor += 1 } else if bytes[cursor] != UInt8(ascii: "}") {
                    throw fail("expected , or } after a label value")
                }
            }
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
                if out.count > labelStart { out.append(UInt8(ascii: ",")) }
                if added.contains(where: { equal(nameStart, cursor, $0) }) { out.append(contentsOf: "exported_".utf8) }
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
                // name="value" as it came.
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[nameStart...cursor]))
                cursor += 1
                guard cursor < end else { throw fail("unterminated label set") }
                if bytes[cursor] == UInt8(ascii: ",") { cursor += 1 } else if bytes[cursor] != UInt8(ascii: "}") {
                    throw fail("expected , or } after a label value")
                }
            }
        }

        static let created = Array("_created".utf8)

        /// The suffixes a sample name may add to its family's name.
        static func suffixes(of kind: MetricFamily.Kind) -> [String] {
            switch kind {
            case .gauge: return [""]
            case .counter: return ["_total", "", "_created"]
            case .histogram: return ["_bucket", "_sum", "_count", "_created"]
            case .summary: return ["", "_sum", "_count", "_created"]
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

        /// A sample value: `[+-]digits[.digits][(e|E)[+-]digits]` (a fraction may stand alone, `.5`),
        /// `+Inf`, `-Inf` or `NaN`.
        static func isValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") || first == UInt8(ascii: "N"),
               bytes.elementsEqual("+Inf".utf8) || bytes.elementsEqual("-Inf".utf8) || bytes.elementsEqual("NaN".utf8) {
                return true
            }
            var index = 0
            func digits() -> Int {
                let start = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - start
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            var mantissa = digits()
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                mantissa += digits()
            }
            guard mantissa > 0 else { return false }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            return index == bytes.count
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
