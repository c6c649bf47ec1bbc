import WeaveHealth
public import WeavePrometheus

/// The metric families of a health report (`weave_health_status{check,state}`, …), as a collector of
/// the report that `report` returns at each scrape. A check is labelled `check` here and everywhere.
public struct HealthMetrics: MetricCollector {
    public var name: String { "health" }
    private let report: @Sendable () async -> HealthReport

    public init(report: @escaping @Sendable () async -> HealthReport) {
        self.report = report
    }

    public func collect() async -> [MetricFamily] {
        Self.families(await report())
    }

    /// The names of the families this collector is the home of.
    public static let familyNames: Set<String> = [
        "weave_health_status", "weave_health_check_duration_seconds", "weave_check_last_success_timestamp_seconds",
        "weave_check_last_run_timestamp_seconds",
    ]

    public static func families(_ report: HealthReport) -> [MetricFamily] {
        let names = report.checks.keys.sorted()
        var states: [([(String, String)], Double)] = []
        var durations: [([(String, String)], Double)] = []
        var lastSuccesses: [([(String, String)], Double)] = []
        var lastRuns: [([(String, String)], Double)] = []
        for name in names {
            let record = report.checks[name]!
            for state in HealthState.allCases {
                states.append(([("check", name), ("state", state.rawValue)], record.status.state == state ? 1 : 0))
            }
            durations.append(([("check", name)], record.lastDuration.totalSeconds))
            if let time = record.lastSuccessAt { lastSuccesses.append(([("check", name)], time)) }
            lastRuns.append(([("check", name)], record.checkedAt))
        }
        return [
            .gauge("weave_health_status", "Health of each check as a state set: 1 for its current state, 0 for the others.", states),
            .gauge("weave_health_check_duration_seconds", "How long the last run of each check took.", unit: "seconds", durations),
            .gauge("weave_check_last_success_timestamp_seconds",
                   "When a run of the check last passed (healthy or degraded), in seconds since the Unix epoch.",
                   unit: "seconds", lastSuccesses),
            .gauge("weave_check_last_run_timestamp_seconds",
                   "When the check's latest result came, in seconds since the Unix epoch: time() minus it is the result's age.",
                   unit: "seconds", lastRuns),
        ]
    }
}
