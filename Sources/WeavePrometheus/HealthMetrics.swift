import WeaveDI

/// The metric families of a health report.
public enum HealthMetrics {
    public static func families(_ report: HealthReport) -> [MetricFamily] {
        let names = report.checks.keys.sorted()
        var states: [([(String, String)], Double)] = []
        var durations: [([(String, String)], Double)] = []
        for name in names {
            let record = report.checks[name]!
            for state in HealthState.allCases {
                states.append(([("service", name), ("state", state.rawValue)], record.status.state == state ? 1 : 0))
            }
            durations.append(([("service", name)], record.lastDuration.totalSeconds))
        }
        return [
            .gauge("weave_health_status", "Health of each check as a state set: 1 for its current state, 0 for the others.", states),
            .gauge("weave_health_check_duration_seconds", "How long the last run of each check took.", unit: "seconds", durations),
        ]
    }
}
