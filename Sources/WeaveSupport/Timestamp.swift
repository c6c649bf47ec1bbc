/// Times in UTC as text, without Foundation: for `/health`, the status page and check reasons.
package enum Timestamp {
    /// The times read as dates from outside (applications' answers, state files): 1970-01-01 to
    /// 9999-12-31T23:59:59Z, in seconds since the epoch.
    package static let dates: ClosedRange<Double> = 0...253_402_300_799
    /// What the formatters show: years 1 to 9999 (a certificate may have expired in 1965).
    private static let shown: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// `2026-11-26T05:09:07.594Z` (RFC 3339).
    package static func rfc3339(_ epochSeconds: Double) -> String {
        // To the nearest millisecond (0.204 is 203.99… ms as a Double): what `seconds(rfc3339:)` reads back.
        let millis = (shownSeconds(epochSeconds) * 1000).rounded()
        let whole = (millis / 1000).rounded(.down)
        return "\(date(utc(whole)))T\(time(utc(whole))).\(pad(Int32(checked: millis - whole * 1000) ?? 0, 3))Z"
    }

    /// The seconds since the epoch of a UTC time as `rfc3339` writes it (`2026-11-26T05:09:07.594Z`,
    /// the fraction optional); nil for anything else.
    package static func seconds(rfc3339 text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ bytes[$0.0] == UInt8(ascii: $0.1.unicodeScalars.first!) }),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21, bytes.count - 21 <= 9, let digits = number(20..<(bytes.count - 1)) else {
                return nil
            }
            fraction = Double(digits) / pow(10, Double(bytes.count - 21))
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Double(timegm(&parts)) + fraction
    }

    /// `2026-11-26 05:09:07 UTC`, for people.
    package static func readable(_ epochSeconds: Double) -> String {
        let parts = utc(epochSeconds)
        return "\(date(parts)) \(time(parts)) UTC"
    }

    /// `2026-11-26`.
    package static func date(_ epochSeconds: Double) -> String {
        date(utc(epochSeconds))
    }

    /// `epochSeconds`, or outside the years 1 to 9999 the nearest end of them: formatting never traps.
    private static func shownSeconds(_ epochSeconds: Double) -> Double {
        min(max(epochSeconds, shown.lowerBound), shown.upperBound)
    }

    private static func utc(_ epochSeconds: Double) -> tm {
        var seconds = time_t(checked: shownSeconds(epochSeconds).rounded(.down)) ?? 0
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return parts
    }

    private static func date(_ parts: tm) -> String { "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))" }

    private static func time(_ parts: tm) -> String { "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))" }

    private static func pad(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
