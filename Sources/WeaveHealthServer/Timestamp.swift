import WeaveSupport

/// RFC 3339 timestamps in UTC, without Foundation.
enum Timestamp {
    static func rfc3339(_ epochSeconds: Double) -> String {
        var seconds = time_t(epochSeconds.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let millis = Int((epochSeconds - epochSeconds.rounded(.down)) * 1000)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}
