import WeaveSupport

/// Reads an exposition another process rendered (Prometheus text 0.0.4 or OpenMetrics 1.0) back
/// into families, so it can be merged with others and rendered again in either format. Sample
/// lines are kept as bytes, with labels added in front of theirs, all in one buffer that the
/// families share (`MetricFamily.preformatted`); timestamps, exemplars and `_created` samples are
/// left out (the merged exposition is fresh).
///
/// It is strict: a line that is not valid exposition syntax, a sample outside the family its TYPE
/// line opened, or a type other than counter, gauge, histogram and summary rejects the whole input
/// with its line number. Nothing is guessed. It also rejects what a Prometheus server, promtool or
/// the OpenMetrics parser would reject in the merged exposition, where one bad line loses the whole
/// scrape: bytes that are not UTF-8, a label name given twice or beginning with `__`, a `# UNIT`
/// that is not a suffix of its family's name, a value outside float64 (`1e400`), and what breaks
/// the rules across a family's lines (`SeriesRules`: each series once, histograms and summaries
/// whole). A counter's sample named without `_total` (text format 0.0.4 allows it) is given it,
/// and a value is written after one space, so that both formats of the merged exposition are
/// valid. A label the caller adds whose name the line uses already is kept as `exported_<name>`,
/// with `exported_` repeated until the name is unique, as Prometheus does. What a parse may cost is
/// bounded (`ParseLimits`): labels per series, samples, and time.
public enum ExpositionParser {
    /// Why an exposition was rejected, and on which line (1-based).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let line: Int
        public let message: String

        public var description: String { "line \(line): \(message)" }
    }

    /// The families of `bytes`, within `limits`. `labels` go first in every sample's label set; a
    /// label of the same name already there is kept as `exported_<name>`, as Prometheus does.
    public static func parse(_ bytes: [UInt8], adding labels: [(String, String)] = [],
                             limits: ParseLimits = ParseLimits()) throws(Failure) -> [MetricFamily] {
        var prefix: [UInt8] = []
        Exposition.appendLabels(&prefix, labels)
        let added = labels.map { Array($0.0.utf8) }
        return try bytes.withUnsafeBufferPointer { buffer throws(Failure) in
            var reader = Reader(bytes: buffer, prefix: prefix, added: added, limits: limits)
            return try reader.run()
        }
    }

    /// One pass over the bytes, without allocating per sample: sample lines are written into `sink`
    /// with the labels added, and each family refers to the part written while it was open.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let prefix: [UInt8]
        /// `prefix` and the comma that separates it from a line's own labels.
        let prefixComma: [UInt8]
        let added: [[UInt8]]
        /// A bit per length (below 64) of the names in `added`: most label names are ruled out by it.
        let addedLengths: UInt64
        let limits: ParseLimits
        var samples = 0
        var families: [MetricFamily] = []
        var lineNumber = 0
        /// HELP and UNIT lines seen before their TYPE line, by family name.
        var pendingHelp: [String: String] = [:]
        var pendingUnit: [String: String] = [:]
        var seen: Set<String> = []
        /// The open family's name (where its TYPE line holds it, in `bytes`) and kind.
        var familyName: (start: Int, count: Int) = (0, 0)
        var familyKind = MetricFamily.Kind.gauge
        /// Where each family's lines begin in `sink` (a family's lines end where the next one's begin).
        var familyStarts: [Int] = []
        /// Room for all of the input and the labels added to a line in four (it grows if that is not enough).
        var sink: ByteSink
        /// The last sample line's part that a next line of the same series usually repeats (its name
        /// and every label but the last, each with its comma: a histogram's buckets differ in `le`
        /// only), already shown valid; nil after a comment line, which may open another family.
        var repeatable: RepeatablePrefix?
        /// Where each label of the last line read whole is in `bytes`: its name's start and length,
        /// and its value's bounds, without quotes (reused from line to line: no allocation per sample).
        var labelNames: [(start: Int, count: Int, valueStart: Int, valueEnd: Int)] = []
        /// A hash table of the last line's label names (their index in `labelNames`, plus one) once it
        /// has `LabelTable.from` of them, so that a line of many labels is checked in linear time.
        var labelTable: LabelTable
        /// The rules across the open family's lines: one series once, a histogram's buckets in order.
        var rules = SeriesRules()
        /// The open family's suffix whose lines have a special label, and its name: a histogram's
        /// `_bucket` lines and `le`, a summary's quantile lines and `quantile`.
        var specialSuffix: Suffix?
        var specialName: [UInt8] = []

        /// Where a sample line's parts end, from its start, up to the beginning of its last label.
        struct RepeatablePrefix {
            /// Where the line it was read from begins in `bytes`.
            var lineStart: Int
            /// Bytes up to the last label's name: what a next line must repeat exactly.
            var count: Int
            /// The last label's `name="`, after `count`: a next line that repeats it too has only the value read.
            var lastName: Int
            /// Whether the last label's name is one the prefix adds.
            var lastRenames: Bool
            var nameEnd: Int
            var labelsStart: Int
            /// Whether a label before the last has a name the prefix adds.
            var renames: Bool
            /// The series hash of the labels before the last (without the special label), whether the
            /// last label is the special one, and where the special label's value is when it is before
            /// the last (in the line this was read from, whose bytes a next line repeats).
            var seriesBeforeLast: UInt64
            var lastIsSpecial: Bool
            var specialBeforeLast: Range<Int>?
        }

        init(bytes: UnsafeBufferPointer<UInt8>, prefix: [UInt8], added: [[UInt8]], limits: ParseLimits) {
            self.bytes = bytes
            self.limits = limits
            labelTable = LabelTable(limit: limits.labels)
            self.prefix = prefix
            prefixComma = prefix + [UInt8(ascii: ",")]
            self.added = added
            addedLengths = added.reduce(0) { $0 | 1 << min($1.count, 63) }
            sink = ByteSink(capacity: max(bytes.count + bytes.count / 4, 64))
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
            if let invalid = UTF8Validation.firstInvalidOffset(bytes) {
                lineNumber = 1 + UnsafeBufferPointer(rebasing: bytes[..<invalid]).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                sink.deallocate()
                throw fail("not valid UTF-8 (byte \(invalid))")
            }
            do {
                try readLines()
            } catch {
                sink.deallocate()
                throw error
            }
            // The families take the lines over, each its own part.
            let storage = sink.finish()
            familyStarts.append(sink.count)
            for index in families.indices {
                families[index].preformatted = PreformattedLines(storage: storage, range: familyStarts[index]..<familyStarts[index + 1])
            }
            return families
        }

        /// Every line: comment lines open families, sample lines go to `sink`.
        mutating func readLines() throws(Failure) {
            guard let base = bytes.baseAddress else { return }
            var start = 0
            var ended = false
            while start < bytes.count {
                lineNumber += 1
                if lineNumber & 1023 == 0, limits.isLate { throw fail(ParseLimits.lateMessage) }
                let end = memchr(base + start, 0x0A, bytes.count - start).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base }
                    ?? bytes.count
                if ended { throw fail("text after # EOF") }
                if end > start {
                    if base[start] == UInt8(ascii: "#") {
                        repeatable = nil
                        ended = try comment(start, end)
                    } else {
                        try sample(base, start, end)
                    }
                }
                start = end + 1
            }
            try endFamily()
        }

        /// The open family's last series must be whole (a histogram's `+Inf` bucket, say).
        mutating func endFamily() throws(Failure) {
            guard let family = families.last else { return }
            do throws(RuleFailure) { try rules.end() } catch { throw fail("\(family.name): \(error.message)") }
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
            guard ExpositionParser.isMetricName(words[2]) else { throw fail("invalid metric name '\(name)'") }
            let rest = words.count > 3 ? String(decoding: words[3], as: UTF8.self) : ""
            switch keyword {
            case "HELP":
                if let last = families.last, last.name == name || last.name + "_total" == name {
                    families[families.count - 1].help = Reader.unescapeHelp(rest)
                } else {
                    pendingHelp[name] = Reader.unescapeHelp(rest)
                }
            case "UNIT":
                guard rest.isEmpty || name.hasSuffix("_" + rest) else { throw fail("unit '\(rest)' is not a suffix of \(name)") }
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
                try endFamily()
                do throws(RuleFailure) { try rules.begin(kind) } catch { throw fail(error.message) }
                switch kind {
                case .histogram: (specialSuffix, specialName) = (.bucket, Array("le".utf8))
                case .summary: (specialSuffix, specialName) = (Suffix.none, Array("quantile".utf8))
                default: (specialSuffix, specialName) = (nil, [])
                }
                let help = pendingHelp.removeValue(forKey: name) ?? pendingHelp.removeValue(forKey: family) ?? ""
                let unit = pendingUnit.removeValue(forKey: family)
                families.append(MetricFamily(name: family, kind: kind, help: help, unit: unit))
                familyStarts.append(sink.count)
                familyName = (start + words[2].startIndex, family.utf8.count)
                familyKind = kind
            }
            return false
        }

        /// Where a sample line's parts are once its name and labels are read.
        struct SampleHead {
            /// After `}`, or after the name.
            var cursor: Int
            var nameEnd: Int
            /// After `{`, when there is a label set; -1 otherwise.
            var labelsStart = -1
            /// Whether a label has a name the prefix adds.
            var renames = false
            /// The hash of its labels but the special one (`le`, `quantile`).
            var series: UInt64 = 0
            /// Where the special label's value is.
            var special: Range<Int>?
        }

        /// `name{labels} value [timestamp] [# exemplar]`, written to `sink` as `name{prefix,labels} value`.
        mutating func sample(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) throws(Failure) {
            let head: SampleHead
            if let last = repeatable, end - start > last.count + last.lastName,
               memcmp(base + start, base + last.lineStart, last.count + last.lastName) == 0 {
                guard let repeated = try repeatedHead(base, start, end, last) else {
                    // More labels than the last line had: read whole, so that every name is compared
                    // with every other.
                    repeatable = nil
                    return try sample(base, start, end)
                }
                head = repeated
            } else {
                repeatable = nil
                guard let scanned = try scannedHead(base, start, end) else { return } // a `_created` line, left out
                head = scanned
            }
            samples += 1
            if let limit = limits.samples, samples > limit { throw fail(limits.tooManySamples()) }
            var cursor = head.cursor
            guard cursor < end, base[cursor] == UInt8(ascii: " ") else { throw fail("expected a space and a value after the labels") }
            let labelsEnd = cursor // after `}`, or after the name
            while cursor < end, base[cursor] == UInt8(ascii: " ") { cursor += 1 }
            let valueStart = cursor
            while cursor < end, base[cursor] != UInt8(ascii: " ") { cursor += 1 }
            guard Reader.isValue(base + valueStart, count: cursor - valueStart) else {
                let value = cursor - valueStart > 40 ? text(valueStart, valueStart + 40) + "…" : text(valueStart, cursor)
                throw fail("'\(value)' is not a sample value (a float64, NaN, +Inf or -Inf)")
            }
            // The line's name is its family's and one of its kind's suffixes (shown above, or on the
            // line it repeats).
            let suffix = Suffix(base + start + familyName.count, count: head.nameEnd - start - familyName.count) ?? Suffix.none
            do throws(RuleFailure) {
                try rules.sample(suffix: suffix, series: head.series,
                                 special: head.special.map { UnsafeBufferPointer(start: base + $0.lowerBound, count: $0.count) },
                                 valueText: UnsafeBufferPointer(start: base + valueStart, count: cursor - valueStart))
            } catch {
                throw fail(error.message)
            }
            try write(base, start, end, head, labelsEnd: labelsEnd, valueStart: valueStart, valueEnd: cursor)
        }

        /// The head of a line with the same bytes as the last line's up to its last label's value, in
        /// the same family: valid there, so valid here, and only the rest of the line is read. Nil
        /// when the line has more labels than the last.
        @inline(__always)
        mutating func repeatedHead(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int,
                                   _ last: RepeatablePrefix) throws(Failure) -> SampleHead? {
            let afterValue = try labelValueEnd(base, from: start + last.count + last.lastName, end: end) + 1
            guard afterValue < end else { throw fail("unterminated label set") }
            if base[afterValue] == UInt8(ascii: ",") { return nil }
            guard base[afterValue] == UInt8(ascii: "}") else { throw fail("expected , or } after a label value") }
            var head = SampleHead(cursor: afterValue + 1, nameEnd: start + last.nameEnd, labelsStart: start + last.labelsStart,
                                  renames: last.renames || last.lastRenames)
            repeatable!.lineStart = start
            let lastValue = start + last.count + last.lastName..<afterValue - 1
            if last.lastIsSpecial {
                (head.series, head.special) = (last.seriesBeforeLast, lastValue)
            } else {
                let name = start + last.count..<start + last.count + last.lastName - 2
                (head.series, head.special) = (last.seriesBeforeLast &+ Reader.pairHash(base, name, lastValue), last.specialBeforeLast)
            }
            return head
        }

        /// The head of a line read whole: its name (of the open family), and its labels, each name
        /// compared with every other; the line is kept as the next one's `repeatable` prefix. Nil for
        /// a `_created` line, which is left out.
        @inline(__always)
        mutating func scannedHead(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) throws(Failure) -> SampleHead? {
            // Most lines begin with the open family's name, which its TYPE line showed valid: only
            // the suffix after it is scanned.
            let suffixStart = start + familyName.count
            let opensWithFamily = !families.isEmpty && suffixStart <= end && memcmp(base + start, base + familyName.start, familyName.count) == 0
            let nameEnd = ExpositionParser.nameEnd(base, from: opensWithFamily ? suffixStart : start, end: end, first: !opensWithFamily)
            guard nameEnd > start else { throw fail("a sample must begin with a metric name") }
            guard !families.isEmpty else { throw fail("sample \(text(start, nameEnd)) has no TYPE line before it") }
            guard opensWithFamily, let suffix = Suffix(base + suffixStart, count: nameEnd - suffixStart), suffix.belongs(to: familyKind) else {
                throw fail("sample \(text(start, nameEnd)) is outside family \(families[families.count - 1].name)")
            }
            if suffix == .created { return nil }
            var head = SampleHead(cursor: nameEnd, nameEnd: nameEnd)
            guard nameEnd < end, base[nameEnd] == UInt8(ascii: "{") else { return head }
            head.labelsStart = nameEnd + 1
            let labels = try scanLabels(base, from: head.labelsStart, end: end)
            head.cursor = labels.end
            head.renames = labels.renames
            // The series: every label's hash but the special one's, whose value is kept aside.
            let hasSpecial = suffix == specialSuffix
            var beforeLast: UInt64 = 0
            var specialBeforeLast: Range<Int>?
            for (index, label) in labelNames.enumerated() {
                let value = label.valueStart..<label.valueEnd
                let isSpecial = hasSpecial && equal(label.start, label.start + label.count, specialName)
                if isSpecial { head.special = value } else { head.series &+= Reader.pairHash(base, label.start..<label.start + label.count, value) }
                if index == labelNames.count - 1 {
                    if labels.lastLabelStart >= 0 {
                        repeatable = RepeatablePrefix(
                            lineStart: start, count: labels.lastLabelStart - start, lastName: labels.lastName,
                            lastRenames: labels.lastRenames, nameEnd: nameEnd - start, labelsStart: head.labelsStart - start,
                            renames: labels.renamesBeforeLast, seriesBeforeLast: beforeLast, lastIsSpecial: isSpecial,
                            specialBeforeLast: specialBeforeLast)
                    }
                } else {
                    beforeLast = head.series
                    specialBeforeLast = head.special
                }
            }
            return head
        }

        /// Copies a checked sample line to `sink` with the prefix's labels, in as few pieces as it
        /// can: a timestamp or exemplar after the value is left out, and the line feed kept when the
        /// value ends the line.
        @inline(__always)
        mutating func write(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, _ head: SampleHead,
                            labelsEnd: Int, valueStart: Int, valueEnd: Int) throws(Failure) {
            let (nameEnd, labelsStart) = (head.nameEnd, head.labelsStart)
            let lineFeed = valueEnd == end && end < bytes.count
            let tail = lineFeed ? valueEnd + 1 : valueEnd
            // A counter's sample named as its family (text 0.0.4 allows it) is written with `_total`.
            var from = start
            if familyKind == .counter && nameEnd - start == familyName.count {
                sink.append(base + start, count: nameEnd - start)
                sink.append(Reader.total)
                from = nameEnd
            }
            // The value after one space: OpenMetrics allows no more, and the text format's extra
            // spaces are dropped (a line with them is copied in two pieces, around them).
            let spaced = valueStart - labelsEnd > 1
            if prefix.isEmpty && !spaced {
                sink.append(base + from, count: tail - from)
            } else if prefix.isEmpty {
                sink.append(base + from, count: labelsEnd + 1 - from)
            } else if labelsStart < 0 || base[labelsStart] == UInt8(ascii: "}") {
                sink.append(base + from, count: nameEnd - from)
                sink.append(UInt8(ascii: "{"))
                sink.append(prefix)
                sink.append(UInt8(ascii: "}"))
                sink.append(base + labelsEnd, count: spaced ? 1 : tail - labelsEnd)
            } else if !head.renames {
                sink.append(base + from, count: labelsStart - from)
                sink.append(prefixComma)
                sink.append(base + labelsStart, count: (spaced ? labelsEnd + 1 : tail) - labelsStart)
            } else {
                sink.append(base + from, count: labelsStart - from)
                sink.append(prefix)
                try labelSet(base, from: labelsStart, end: end)
                sink.append(UInt8(ascii: "}"))
                sink.append(base + labelsEnd, count: spaced ? 1 : tail - labelsEnd)
            }
            if spaced { sink.append(base + valueStart, count: tail - valueStart) }
            if !lineFeed { sink.append(UInt8(ascii: "\n")) }
        }

        /// What `scanLabels` found.
        struct LabelScan {
            /// The index after `}`.
            var end: Int
            /// Whether a label has a name the prefix adds (then `labelSet` copies it renamed).
            var renames = false
            /// Where the last label begins (-1 when none does from where the scan began), the length
            /// of its `name="`, and whether its name, or one before it, is one the prefix adds.
            var lastLabelStart = -1
            var lastName = 0
            var lastRenames = false
            var renamesBeforeLast = false
        }

        /// Checks a label set from `start` (after `{`, or after a label's comma). (Mutating only so
        /// that `self` is passed in place: a non-mutating call from `sample` copied the whole reader
        /// for every line.)
        mutating func scanLabels(_ base: UnsafePointer<UInt8>, from start: Int, end: Int) throws(Failure) -> LabelScan {
            var scan = LabelScan(end: start)
            var cursor = start
            labelNames.removeAll(keepingCapacity: true)
            labelTable.clear()
            while true {
                guard cursor < end else { throw fail("unterminated label set") }
                if base[cursor] == UInt8(ascii: "}") {
                    scan.end = cursor + 1
                    return scan
                }
                let nameStart = cursor
                cursor = try labelName(base, from: cursor, end: end)
                let nameCount = cursor - 2 - nameStart
                guard labelNames.count < limits.labels else { throw fail(limits.tooManyLabels()) }
                if !labelTable.insert(nameStart, nameCount, base, labelNames) {
                    throw fail("label \(text(nameStart, nameStart + nameCount)) appears twice")
                }
                let valueStart = cursor
                scan.renamesBeforeLast = scan.renames
                scan.lastLabelStart = nameStart
                scan.lastName = cursor - nameStart
                scan.lastRenames = addedLengths & (1 << min(cursor - 2 - nameStart, 63)) != 0
                    && added.contains { equal(nameStart, cursor - 2, $0) }
                scan.renames = scan.renames || scan.lastRenames
                cursor = try labelValueEnd(base, from: cursor, end: end) + 1
                labelNames.append((nameStart, nameCount, valueStart, cursor - 1))
                guard cursor < end else { throw fail("unterminated label set") }
                if base[cursor] == UInt8(ascii: ",") { cursor += 1 } else if base[cursor] != UInt8(ascii: "}") {
                    throw fail("expected , or } after a label value")
                }
            }
        }

        /// The index after `name="` of a label that begins at `start`.
        @inline(__always)
        func labelName(_ base: UnsafePointer<UInt8>, from start: Int, end: Int) throws(Failure) -> Int {
            let cursor = ExpositionParser.nameEnd(base, from: start, end: end, colons: false)
            guard cursor > start, cursor + 1 < end, base[cursor] == UInt8(ascii: "="), base[cursor + 1] == UInt8(ascii: "\"") else {
                throw fail("a label must be name=\"value\"")
            }
            if cursor - start >= 2, base[start] == UInt8(ascii: "_"), base[start + 1] == UInt8(ascii: "_") {
                throw fail("label name \(text(start, cursor)) is reserved (names beginning with __ are Prometheus's own)")
            }
            return cursor + 2
        }

        /// The index of the quote that closes a label value beginning at `start`.
        @inline(__always)
        func labelValueEnd(_ base: UnsafePointer<UInt8>, from start: Int, end: Int) throws(Failure) -> Int {
            var cursor = start
            while true {
                while cursor < end, base[cursor] != UInt8(ascii: "\""), base[cursor] != UInt8(ascii: "\\") { cursor += 1 }
                guard cursor < end else { throw fail("unterminated label value") }
                switch base[cursor] {
                case UInt8(ascii: "\""):
                    return cursor
                case UInt8(ascii: "\\"):
                    guard cursor + 1 < end, [UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "n")].contains(base[cursor + 1]) else {
                        throw fail("invalid escape in a label value")
                    }
                    cursor += 2
                default:
                    cursor += 1
                }
            }
        }

        /// Copies a label set after `{` into `sink`, each label after a comma (the prefix is before it),
        /// renaming a label that the prefix adds.
        mutating func labelSet(_ base: UnsafePointer<UInt8>, from start: Int, end: Int) throws(Failure) {
            var cursor = start
            while true {
                guard cursor < end else { throw fail("unterminated label set") }
                if base[cursor] == UInt8(ascii: "}") { return }
                let nameStart = cursor
                cursor = try labelName(base, from: cursor, end: end)
                sink.append(UInt8(ascii: ","))
                if added.contains(where: { equal(nameStart, cursor - 2, $0) }) {
                    for _ in 0..<exportedDepth(Array(UnsafeBufferPointer(start: base + nameStart, count: cursor - 2 - nameStart))) {
                        sink.append(Reader.exported)
                    }
                }
                let close = try labelValueEnd(base, from: cursor, end: end)
                // name="value" as it came.
                sink.append(base + nameStart, count: close + 1 - nameStart)
                cursor = close + 1
                guard cursor < end else { throw fail("unterminated label set") }
                if base[cursor] == UInt8(ascii: ",") { cursor += 1 } else if base[cursor] != UInt8(ascii: "}") {
                    throw fail("expected , or } after a label value")
                }
            }
        }

        static let exported = Array("exported_".utf8)
        static let total = Array("_total".utf8)

        /// A label's part of a series hash: its name and value (escaped, as written), mixed so that a
        /// sum of them does not depend on the labels' order and two sets rarely meet.
        @inline(__always)
        static func pairHash(_ base: UnsafePointer<UInt8>, _ name: Range<Int>, _ value: Range<Int>) -> UInt64 {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for index in name { hash = (hash ^ UInt64(base[index])) &* 0x0000_0100_0000_01B3 }
            hash = (hash ^ 0x3D) &* 0x0000_0100_0000_01B3
            for index in value { hash = (hash ^ UInt64(base[index])) &* 0x0000_0100_0000_01B3 }
            // splitmix64's finalizer
            hash = (hash ^ (hash >> 30)) &* 0xBF58_476D_1CE4_E5B9
            hash = (hash ^ (hash >> 27)) &* 0x94D0_49BB_1331_11EB
            return hash ^ (hash >> 31)
        }

        /// How many `exported_` make `name` (a name the caller adds, which the line has too) a name
        /// that neither the line (`labelNames`) nor the caller's labels use.
        func exportedDepth(_ name: [UInt8]) -> Int {
            var depth = 1
            var candidate = Reader.exported + name
            while added.contains(candidate)
                    || labelNames.contains(where: { equal($0.start, $0.start + $0.count, candidate) }) {
                depth += 1
                candidate = Reader.exported + candidate
            }
            return depth
        }

        /// A sample value: `[+-]digits[.digits][(e|E)[+-]digits]` (a fraction may stand alone, `.5`),
        /// `+Inf`, `-Inf` or `NaN`.
        static func isValue(_ start: UnsafePointer<UInt8>, count: Int) -> Bool {
            // Most values are plain integers (counts, buckets): digits only.
            var digitsOnly = 0
            while digitsOnly < count, start[digitsOnly] &- UInt8(ascii: "0") < 10 { digitsOnly += 1 }
            if digitsOnly == count { return count > 0 && (count <= 15 || isFinite(start, count: count)) }
            let bytes = UnsafeBufferPointer(start: start, count: count)
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
            var exponent = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                exponent = true
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            guard index == bytes.count else { return false }
            // Fifteen digits without an exponent are always a float64; beyond, it is read to be sure.
            return (count <= 15 && !exponent) || isFinite(start, count: count)
        }

        /// Whether the number `start` spells (already shown valid) is within float64's range.
        static func isFinite(_ start: UnsafePointer<UInt8>, count: Int) -> Bool {
            SeriesRules.number(UnsafeBufferPointer(start: start, count: count))?.isFinite == true
        }

        /// HELP text with `\\` and `\n` read back, byte by byte (a scan of `Character`s costs a
        /// grapheme break per character, on every HELP line of every application at every scrape).
        static func unescapeHelp(_ text: String) -> String {
            guard text.utf8.contains(UInt8(ascii: "\\")) else { return text }
            var out: [UInt8] = []
            out.reserveCapacity(text.utf8.count)
            var escaping = false
            for byte in text.utf8 {
                if escaping {
                    out.append(byte == UInt8(ascii: "n") ? UInt8(ascii: "\n") : byte)
                    escaping = false
                } else if byte == UInt8(ascii: "\\") {
                    escaping = true
                } else {
                    out.append(byte)
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}

/// The bytes the parser writes, in memory from `malloc` that it grows with `realloc`; appends are
/// a bounds check and a copy. Its owner either deallocates it or `finish`es it into a storage.
private struct ByteSink {
    private(set) var base: UnsafeMutablePointer<UInt8>
    var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        base = PreformattedLines.Storage.reallocate(nil, capacity)
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafePointer<UInt8>, count: Int) {
        if self.count + count > capacity { grow(to: self.count + count) }
        (base + self.count).update(from: bytes, count: count)
        self.count += count
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { if let start = $0.baseAddress { append(start, count: $0.count) } }
    }

    private mutating func grow(to needed: Int) {
        capacity = max(needed, capacity * 2)
        base = PreformattedLines.Storage.reallocate(base, capacity)
    }

    /// The bytes written, as a storage that frees them (the room left over goes back to the heap).
    func finish() -> PreformattedLines.Storage {
        PreformattedLines.Storage(taking: PreformattedLines.Storage.reallocate(base, max(count, 1)))
    }

    func deallocate() { free(base) }
}

extension ExpositionParser {
    @inline(__always)
    static func isNameByte(_ byte: UInt8, colons: Bool) -> Bool {
        (byte | 0x20) &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: "_")
            || (colons && byte == UInt8(ascii: ":"))
    }

    /// The end of the name from `start` (`start` itself when there is none): letters, digits, `_`
    /// and (in metric names) `:`, not beginning with a digit when `first` (it continues a name otherwise).
    @inline(__always)
    static func nameEnd(_ base: UnsafePointer<UInt8>, from start: Int, end: Int, first: Bool = true, colons: Bool = true) -> Int {
        guard start < end, !first || base[start] &- UInt8(ascii: "0") >= 10 else { return start }
        var cursor = start
        while cursor < end, isNameByte(base[cursor], colons: colons) { cursor += 1 }
        return cursor
    }

    static func isMetricName(_ bytes: ArraySlice<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.withUnsafeBufferPointer { nameEnd($0.baseAddress!, from: 0, end: $0.count) == $0.count }
    }

    /// Whether `name` is a metric name (`colons`) or a label name.
    static func isName(_ name: String, colons: Bool) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            !bytes.isEmpty && nameEnd(bytes.baseAddress!, from: 0, end: bytes.count, colons: colons) == bytes.count
        }
    }

    /// What a sample's name adds to its family's: `_total`, `_bucket` and so on.
    enum Suffix {
        case none, total, created, bucket, sum, count

        init?(_ bytes: UnsafePointer<UInt8>, count: Int) {
            func matches(_ text: StaticString) -> Bool { memcmp(bytes, text.utf8Start, count) == 0 }
            switch count {
            case 0: self = .none
            case 4 where matches("_sum"): self = .sum
            case 6 where matches("_total"): self = .total
            case 6 where matches("_count"): self = .count
            case 7 where matches("_bucket"): self = .bucket
            case 8 where matches("_created"): self = .created
            default: return nil
            }
        }

        /// Whether a sample of a family of `kind` may have it.
        func belongs(to kind: MetricFamily.Kind) -> Bool {
            switch (kind, self) {
            case (.gauge, .none), (.counter, .total), (.counter, .none), (.counter, .created),
                 (.histogram, .bucket), (.histogram, .sum), (.histogram, .count), (.histogram, .created),
                 (.summary, .none), (.summary, .sum), (.summary, .count), (.summary, .created):
                return true
            default:
                return false
            }
        }
    }
}
