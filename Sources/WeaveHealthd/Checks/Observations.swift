import WeaveHealth
import WeaveSupport

/// What checks observed besides their status: a value for `/health`'s `observedValue`, and what a
/// check type keeps of each check's last run for its own metric families (`CheckMetrics.families`):
/// an https check's TLS session, a `systemd_unit` check's unit, an exec check's perfdata. Shared by
/// the checks and the metrics source.
final class Observations: Sendable {
    /// By check; `fresh` while the check's current run recorded it (or no run has started since).
    private let values = Locked<[String: (value: Double, unit: String, fresh: Bool)]>([:])
    /// By check type (`type:`), then by check: two types that keep the same Swift type never see
    /// each other's.
    private let kept = Locked<[String: [String: any Sendable]]>([:])

    func record(_ check: String, value: Double, unit: String) {
        values.withLock { $0[check] = (value, unit, true) }
    }

    func value(of check: String) -> (value: Double, unit: String)? {
        values.withLock { $0[check].map { ($0.value, $0.unit) } }
    }

    /// Runs one run of `check`: a value the run does not record is cleared when it ends, so that a
    /// failed observation ("connection refused") does not show the last success's value. The last
    /// value stays visible while the run is in progress, beside the status it belongs to.
    func run(_ check: String, _ body: () async -> HealthStatus) async -> HealthStatus {
        values.withLock { $0[check]?.fresh = false }
        let status = await body()
        values.withLock { if $0[check]?.fresh == false { $0[check] = nil } }
        return status
    }

    /// Keeps `observation` as the last one of `check`, of check type `type`; nil forgets it (a run
    /// that observed nothing, such as a failed handshake, shows no series).
    func record<Observation: Sendable>(_ check: String, of type: any CheckOptions.Type, _ observation: Observation?) {
        kept.withLock { $0[type.typeName, default: [:]][check] = observation }
    }

    /// The last observation of every check of type `type`, by check.
    func all<Observation: Sendable>(of type: any CheckOptions.Type, as _: Observation.Type) -> [String: Observation] {
        (kept.withLock { $0[type.typeName] } ?? [:]).compactMapValues { $0 as? Observation }
    }
}

/// A configured check whose runs are `Observations.run`s: what `Runtime` registers.
struct ObservedCheck: HealthCheckable {
    let name: String
    let check: any HealthCheckable
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        await observations.run(name) { await check.healthCheck() }
    }
}
