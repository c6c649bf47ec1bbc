import WeavePrometheus

/// The units the current runtime's `systemd_unit` checks last read, `{check,unit}`: the active
/// state as a state set, the service's restarts (`NRestarts`), and when it entered its state.
struct SystemdUnitMetrics: MetricCollector {
    let source: DaemonSource

    /// systemd's active states, the state set's members.
    static let states = ["active", "reloading", "inactive", "failed", "activating", "deactivating"]

    func collect() async -> [MetricFamily] {
        var states: [([(String, String)], Double)] = []
        var restarts: [([(String, String)], Double)] = []
        var changes: [([(String, String)], Double)] = []
        for (check, unit) in source.runtime.observations.allUnits.sorted(by: { $0.key < $1.key }) {
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
