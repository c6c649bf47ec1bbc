import WeaveDI
import WeaveHealth

/// The metric families of a health report (`weave_health_status`, …), as a collector of the report
/// that `report` returns at each scrape.
public struct HealthMetrics: MetricCollector {
    private let report: @Sendable () async -> HealthReport

    public init(report: @escaping @Sendable () async -> HealthReport) {
        self.report = report
    }

    public func collect() async -> [MetricFamily] {
        Self.families(await report())
    }

    /// The names of the families this collector is the home of.
    public static let familyNames: Set<String> = ["weave_health_status", "weave_health_check_duration_seconds"]

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
