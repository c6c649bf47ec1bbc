import WeavePrometheus
import WeaveSystemd

/// What the log writer could not deliver to journald in time (`weave_log_entries_*_total`).
struct LogMetrics: MetricCollector {
    var name: String { "log" }
    let writer: JournalWriter

    func collect() async -> [MetricFamily] {
        let counts = writer.counts
        return [
            .counter("weave_log_entries_redirected",
                     "Log entries meant for journald written to standard error instead (journald stalled, unreachable or behind).",
                     [([], Double(counts.redirected))]),
            .counter("weave_log_entries_dropped",
                     "Log entries lost because neither journald nor standard error could take them in time.",
                     [([], Double(counts.dropped))]),
        ]
    }
}
