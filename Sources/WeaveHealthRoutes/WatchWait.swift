import WeaveSupport

/// How long a watching request (`/health?index=…&wait=…`, `/events?after=…&wait=…`) may be held
/// before it is answered anyway, as Consul's blocking queries take it: `wait=30s`, `500ms`, `1m`,
/// `1h` or plain seconds; at most `longest` (a longer wait is cut to it, as Consul cuts its own).
package enum WatchWait {
    /// The longest wait a request gets.
    package static let longest = Duration.seconds(60)
    /// The header that tells a client the endpoint can be watched, with the index to send next.
    package static let indexHeader = "X-Weave-Index"

    /// The request's `wait`: nil when it asks none; a 400 answer when it is not a duration.
    package static func of(_ request: HealthRequest, router: HealthRouter) -> Result<Duration?, Refusal> {
        guard let text = request.values("wait").last else { return .success(nil) }
        guard let wait = parse(text) else {
            let shown = String(text.prefix(64)).logSafe
            return .failure(Refusal(response: router.text(400, "wait=\(shown) is not a duration such as 30s, 500ms or 1m (at most 60s is waited)\n")))
        }
        return .success(min(wait, longest))
    }

    /// `30s`, `500ms`, `1m`, `1h` or `30`: up to 9 digits and a unit; nil for anything else.
    static func parse(_ text: String) -> Duration? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9, let value = Int64(digits) else { return nil }
        switch text.dropFirst(digits.count) {
        case "", "s": return .seconds(value)
        case "ms": return .milliseconds(value)
        case "m": return .seconds(value) * 60
        case "h": return .seconds(value) * 3_600
        default: return nil
        }
    }

    /// A bad `wait`, answered as it is.
    package struct Refusal: Error {
        package let response: HealthResponse
    }
}
