import WeaveSupport

/// The rules that span the lines of one family, which `ExpositionParser` checks as it reads them, so
/// that the merged exposition passes promtool, the OpenMetrics parser and a Prometheus server:
/// - a series (a family's name and labels; a histogram's buckets and a summary's quantiles are one
///   series with their `_sum` and `_count`) appears once, its lines together;
/// - a histogram's bucket has an `le` that is a number (`+Inf` spelled so), the buckets of a series
///   go up in `le` and do not go down in count, the last is `+Inf`, `_count` equals it, and `_sum`
///   and `_count` come together;
/// - a summary's quantile line has a `quantile` from 0 to 1;
/// - counts (buckets, `_count`, a counter's `_total`) and sums are not negative or NaN, and counts
///   are whole numbers below 2^64.
/// A line that breaks one is rejected with the rule.
struct SeriesRules {
    private var kind = MetricFamily.Kind.gauge
    /// The series being read (its labels' hash, without `le` or `quantile`) and those already read.
    private var current: UInt64?
    private var finished: Set<UInt64> = []
    /// The current series' histogram: the last bucket's bound and count, the `+Inf` bucket's count,
    /// `_count`, and whether `_sum` was seen.
    private var lastBound = -Double.infinity
    private var lastCount = 0.0
    private var infinite: Double?
    private var count: Double?
    private var hasSum = false
    /// The `le` of each bucket of the last histogram series, by position, as read (up to 8 bytes)
    /// and as a number: the series of a family usually share their bounds, which are then compared
    /// as bytes rather than read again.
    private var bounds: [(text: UInt64, count: Int, value: Double)] = []
    private var bucketIndex = 0

    /// A new family of `kind`: the last one's last series must be whole.
    mutating func begin(_ kind: MetricFamily.Kind) throws(RuleFailure) {
        try end()
        self.kind = kind
        finished.removeAll(keepingCapacity: true)
    }

    /// The end of the family.
    mutating func end() throws(RuleFailure) {
        try finishSeries()
        current = nil
    }

    /// One sample line: `series` hashes its labels (without `le` or `quantile`), `special` is the
    /// text of `le` or `quantile` when the line has it, `valueText` the sample's value (shown valid).
    mutating func sample(suffix: ExpositionParser.Suffix, series: UInt64, special: UnsafeBufferPointer<UInt8>?,
                         valueText: UnsafeBufferPointer<UInt8>) throws(RuleFailure) {
        if series != current {
            try finishSeries()
            guard finished.insert(series).inserted else {
                throw RuleFailure("a series appears twice, or its lines are not together")
            }
            current = series
        } else if kind == .gauge || kind == .counter {
            throw RuleFailure("a series appears twice")
        }
        if kind == .gauge { return }
        let value = Self.number(valueText) ?? .nan
        switch (kind, suffix) {
        case (.counter, _):
            try countable(value, "a counter's value")
        case (.histogram, .bucket):
            guard let special else { throw RuleFailure("a histogram bucket without le") }
            let bound = try self.bound(special)
            try countable(value, "a bucket's count")
            guard bound > lastBound else { throw RuleFailure("buckets not in increasing le order") }
            guard value >= lastCount else { throw RuleFailure("a bucket's count is below the one before it") }
            (lastBound, lastCount) = (bound, value)
            if bound == .infinity { infinite = value }
        case (.histogram, .count), (.summary, .count):
            try countable(value, "_count")
            guard count == nil else { throw RuleFailure("_count twice in a series") }
            count = value
        case (.histogram, .sum), (.summary, .sum):
            guard !value.isNaN, value >= 0 else { throw RuleFailure("_sum is negative or NaN") }
            guard !hasSum else { throw RuleFailure("_sum twice in a series") }
            hasSum = true
        case (.summary, _):
            guard let special else { throw RuleFailure("a summary's sample without quantile") }
            guard let quantile = Self.number(special), quantile >= 0, quantile <= 1 else {
                throw RuleFailure("quantile=\"\(Self.text(special))\" is not a number from 0 to 1")
            }
            guard value.isNaN || value >= 0 else { throw RuleFailure("a quantile's value is negative") }
        default:
            break
        }
    }

    /// A bucket's `le` as a number: the bound at the same position of the last series when the
    /// bytes are the same, else read (and kept for the next series).
    private mutating func bound(_ text: UnsafeBufferPointer<UInt8>) throws(RuleFailure) -> Double {
        defer { bucketIndex += 1 }
        var packed: UInt64 = 0
        if text.count <= 8 { withUnsafeMutableBytes(of: &packed) { $0.copyMemory(from: UnsafeRawBufferPointer(text)) } }
        if text.count <= 8, bucketIndex < bounds.count, bounds[bucketIndex].count == text.count, bounds[bucketIndex].text == packed {
            return bounds[bucketIndex].value
        }
        guard let bound = Self.number(text), !bound.isNaN else { throw RuleFailure("le=\"\(Self.text(text))\" is not a number") }
        guard !bound.isInfinite || text.elementsEqual("+Inf".utf8) else { throw RuleFailure("le=\"\(Self.text(text))\" must be spelled +Inf") }
        if text.count <= 8 {
            if bucketIndex < bounds.count { bounds[bucketIndex] = (packed, text.count, bound) } else { bounds.append((packed, text.count, bound)) }
        }
        return bound
    }

    private func countable(_ value: Double, _ what: String) throws(RuleFailure) {
        guard value >= 0, value.isFinite || value == .infinity else { throw RuleFailure("\(what) is negative or NaN") }
        guard kind != .counter else { return }
        guard value == value.rounded() else { throw RuleFailure("\(what) is not a whole number") }
        // A histogram's or summary's count is a 64-bit integer in protobuf: 1e300 or +Inf is none (#64).
        guard value < 0x1p64 else { throw RuleFailure("\(what) is beyond a 64-bit count") }
    }

    /// The checks that need the whole series: a histogram's `+Inf` bucket, `_count` and `_sum`.
    private mutating func finishSeries() throws(RuleFailure) {
        defer { (lastBound, lastCount, infinite, count, hasSum, bucketIndex) = (-.infinity, 0, nil, nil, false, 0) }
        guard current != nil, kind == .histogram else { return }
        guard let infinite else { throw RuleFailure("a histogram series without its +Inf bucket") }
        if let count, count != infinite { throw RuleFailure("_count (\(count)) is not the +Inf bucket's count (\(infinite))") }
        guard (count != nil) == hasSum else { throw RuleFailure("_sum and _count must come together") }
    }

    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes.prefix(40), as: UTF8.self)
    }

    /// Powers of ten a float64 holds exactly.
    private static let exactPowers: [Double] = (0...22).map { (0..<$0).reduce(1.0) { product, _ in product * 10 } }

    /// `bytes` as a number (`+Inf`, `-Inf` and `NaN` included, as Prometheus reads them); nil when it
    /// is not one. Most are read directly: at most 19 significant digits and a power of ten within
    /// 10^±22 make an exact float64 from one multiplication or division; the rest go to `strtod`.
    static func number(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        // Most values are counts: up to 15 digits, exact as they are.
        if bytes.count <= 15 {
            var whole: UInt64 = 0
            var digits = 0
            while digits < bytes.count, bytes[digits] &- UInt8(ascii: "0") < 10 {
                whole = whole &* 10 &+ UInt64(bytes[digits] &- UInt8(ascii: "0"))
                digits += 1
            }
            if digits == bytes.count && digits > 0 { return Double(whole) }
        }
        var index = 0
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var scale = 0 // the power of ten the digits are multiplied by
        var seenPoint = false
        var any = false
        var truncated = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte &- UInt8(ascii: "0") < 10 {
                any = true
                if mantissa == 0 && byte == UInt8(ascii: "0") {
                    if seenPoint { scale -= 1 }
                } else if digits < 19 {
                    mantissa = mantissa * 10 + UInt64(byte &- UInt8(ascii: "0"))
                    digits += 1
                    if seenPoint { scale -= 1 }
                } else {
                    truncated = true // a digit beyond the 19 kept: strtod reads it
                }
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else {
                break
            }
            index += 1
        }
        if !any { return special(bytes) }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponent = 0
            var exponentDigits = 0
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[index] &- UInt8(ascii: "0")) }
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { return nil }
            scale += exponentNegative ? -exponent : exponent
        }
        guard index == bytes.count else { return nil }
        if !truncated, mantissa < 1 << 53, abs(scale) <= 22 {
            let magnitude = scale >= 0 ? Double(mantissa) * exactPowers[scale] : Double(mantissa) / exactPowers[-scale]
            return negative ? -magnitude : magnitude
        }
        let text = [CChar](unsafeUninitializedCapacity: bytes.count + 1) { buffer, initialized in
            for (offset, byte) in bytes.enumerated() { buffer[offset] = CChar(bitPattern: byte) }
            buffer[bytes.count] = 0
            initialized = bytes.count + 1
        }
        return strtod(text, nil)
    }

    /// `+Inf`, `-Inf` and `NaN`, as Prometheus spells them (and the spellings Go reads too).
    private static func special(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        let text = String(decoding: bytes, as: UTF8.self)
        switch text.lowercased() {
        case "+inf", "inf": return .infinity
        case "-inf": return -.infinity
        case "nan": return .nan
        default: return nil
        }
    }
}

/// A rule of `SeriesRules` a line broke, in words.
struct RuleFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
