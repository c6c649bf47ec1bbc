import WeaveDI

/// What checks observed besides their status: a value for `/health`'s `observedValue`, and Nagios
/// perfdata for `weave_check_perfdata`. Shared by the checks and the metrics source.
final class Observations: Sendable {
    private let values = Locked<[String: (value: Double, unit: String)]>([:])
    private let perfdata = Locked<[String: [(label: String, value: Double)]]>([:])

    func record(_ check: String, value: Double, unit: String) {
        values.withLock { $0[check] = (value, unit) }
    }

    func record(_ check: String, perfdata items: [(label: String, value: Double)]) {
        perfdata.withLock { $0[check] = items }
    }

    func value(of check: String) -> (value: Double, unit: String)? {
        values.withLock { $0[check] }
    }

    /// Every perfdata item, by check.
    var allPerfdata: [String: [(label: String, value: Double)]] {
        perfdata.withLock { $0 }
    }
}
