import WeaveDI
import WeaveHealthServer
import WeavePrometheus
import WeaveSystemd

/// The endpoints' view of the daemon: whatever runtime is current (a reload swaps it).
final class DaemonSource: HealthSource {
    private let current: Locked<Runtime>

    init(_ runtime: Runtime) {
        current = Locked(runtime)
    }

    var runtime: Runtime { current.withLock { $0 } }

    func replace(with runtime: Runtime) {
        current.withLock { $0 = runtime }
    }

    func healthReport() async -> HealthReport {
        runtime.monitor.latestReport
    }

    func metricFamilies() async -> [MetricFamily] {
        let runtime = self.runtime
        return ContainerMetrics.families(runtime.container.statistics())
            + HealthMetrics.families(runtime.monitor.latestReport)
            + [runtime.perfdataFamily] + Self.logFamilies(JournalWriter.shared.counts)
    }

    /// What the log writer could not deliver to journald in time.
    static func logFamilies(_ counts: JournalWriter.Statistics) -> [MetricFamily] {
        [
            .counter("weave_log_entries_redirected",
                     "Log entries meant for journald written to standard error instead (journald stalled, unreachable or behind).",
                     [([], Double(counts.redirected))]),
            .counter("weave_log_entries_dropped",
                     "Log entries lost because neither journald nor standard error could take them in time.",
                     [([], Double(counts.dropped))]),
        ]
    }

    func observedValue(of check: String) async -> (value: Double, unit: String)? {
        runtime.observations.value(of: check)
    }
}
