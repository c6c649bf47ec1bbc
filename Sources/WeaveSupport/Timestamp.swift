/// Times in UTC as text, without Foundation: for `/health`, the status page and check reasons.
package enum Timestamp {
    /// `2026-11-26T05:09:07.594Z` (RFC 3339).
    package static func rfc3339(_ epochSeconds: Double) -> String {
        let parts = utc(epochSeconds)
        let millis = Int32((epochSeconds - epochSeconds.rounded(.down)) * 1000)
        return "\(date(parts))T\(time(parts)).\(pad(millis, 3))Z"
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

    private static func utc(_ epochSeconds: Double) -> tm {
        var seconds = time_t(epochSeconds.rounded(.down))
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
