import WeaveSupport

/// What checks observed besides their status: a value for `/health`'s `observedValue`, and what a
/// check type keeps of each check's last run for its own metric families (`CheckMetrics.families`):
/// an https check's TLS session, a `systemd_unit` check's unit, an exec check's perfdata. Shared by
/// the checks and the metrics source.
final class Observations: Sendable {
    private let values = Locked<[String: (value: Double, unit: String)]>([:])
    /// By observation type, then by check.
    private let kept = Locked<[ObjectIdentifier: [String: any Sendable]]>([:])

    func record(_ check: String, value: Double, unit: String) {
        values.withLock { $0[check] = (value, unit) }
    }

    func value(of check: String) -> (value: Double, unit: String)? {
        values.withLock { $0[check] }
    }

    /// Keeps `observation` as `check`'s last one of its type; nil forgets it (a run that observed
    /// nothing, such as a failed handshake, shows no series).
    func record<Observation: Sendable>(_ check: String, _ observation: Observation?) {
        kept.withLock { $0[ObjectIdentifier(Observation.self), default: [:]][check] = observation }
    }

    /// Every check's last observation of `type`, by check.
    func all<Observation: Sendable>(_ type: Observation.Type) -> [String: Observation] {
        (kept.withLock { $0[ObjectIdentifier(type)] } ?? [:]).compactMapValues { $0 as? Observation }
    }
}
