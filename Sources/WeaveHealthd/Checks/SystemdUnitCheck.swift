import WeaveHealth
import WeavePrometheus
import WeaveSystemd

/// A systemd unit is active, asked of the host's systemd over D-Bus (sd-bus): `active` is healthy;
/// `reloading`, `activating`, `deactivating` degraded, but `activating (auto-restart)` (it failed
/// and waits to be restarted) and `inactive`, `failed` or a unit that does not exist unhealthy.
/// The reason says the state, the result and the restarts, as `systemctl status` would.
struct SystemdUnitCheck: HealthCheckable {
    let name: String
    let unit: String
    let timeout: Duration
    let blocking: BlockingCalls
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        switch await SystemdUnit.read(unit, timeout: timeout, on: blocking) {
        case .failure(let failure):
            observations.record(name, of: Options.self, nil as SystemdUnit?)
            return .unhealthy(error: CheckFailure("\(unit): \(failure)"))
        case .success(let status):
            observations.record(name, of: Options.self, status.loadState == "not-found" ? nil : status)
            return Self.health(status)
        }
    }

    /// What the unit's states mean for its health.
    static func health(_ unit: SystemdUnit) -> HealthStatus {
        let reason = unit.summary
        if unit.loadState == "not-found" { return .unhealthy(error: CheckFailure(reason)) }
        switch unit.activeState {
        case "active": return .healthy
        case "activating" where unit.subState == "auto-restart": return .unhealthy(error: CheckFailure(reason))
        case "reloading", "activating", "deactivating": return .degraded(reason: reason)
        default: return .unhealthy(error: CheckFailure(reason))
        }
    }
}

extension SystemdUnitCheck {
    /// `type: systemd_unit`: `unit`.
    struct Options: CheckOptions {
        static let typeName = "systemd_unit"
        static let keys: Set<String> = ["unit"]
        let unit: String

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            let node = try fields.required("unit")
            unit = try fields.loader.string(node)
            guard SystemdUnit.isValidName(unit) else {
                throw fields.loader.error(node, "unit must be a unit name with its type, such as postgresql.service, not '\(unit)'")
            }
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            SystemdUnitCheck(name: context.name, unit: unit, timeout: context.timeout, blocking: context.blocking,
                             observations: context.observations)
        }
    }
}

extension SystemdUnitCheck.Options: CheckMetrics {
    static let familyPrefix = "weave_systemd_unit_"

    /// systemd's active states, the state set's members.
    static let states = ["active", "reloading", "inactive", "failed", "activating", "deactivating"]

    /// The units the checks last read, `{check,unit}`: the active state as a state set, the
    /// service's restarts (`NRestarts`), and when it entered its state.
    static func families(_ observations: Observations) -> [MetricFamily] {
        var states: [([(String, String)], Double)] = []
        var restarts: [([(String, String)], Double)] = []
        var changes: [([(String, String)], Double)] = []
        for (check, unit) in observations.all(of: Self.self, as: SystemdUnit.self).sorted(by: { $0.key < $1.key }) {
            let labels = [("check", check), ("unit", unit.name)]
            for state in Self.states { states.append((labels + [("state", state)], unit.activeState == state ? 1 : 0)) }
            if let count = unit.restarts { restarts.append((labels, Double(count))) }
            if let time = unit.stateChangedAt { changes.append((labels, time)) }
        }
        return [
            .gauge("weave_systemd_unit_state", "A systemd unit's active state as a state set: 1 for its current state, 0 for the others.", states),
            .counter("weave_systemd_unit_restarts", "How often systemd restarted the service (NRestarts).", restarts),
            .gauge("weave_systemd_unit_state_change_timestamp_seconds", "When the unit entered its current state, in seconds since the Unix epoch.",
                   unit: "seconds", changes),
        ]
    }
}
