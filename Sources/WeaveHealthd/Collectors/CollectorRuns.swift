import WeavePrometheus
import WeaveSupport

/// The daemon's own collectors, collected in order, each timed and each checked against those
/// before it: every family has one home, so a family whose names an earlier collector's family
/// rendered is left out, and its collector's success is 0, as it is when the collector says its
/// collection failed (what it made is kept). node_exporter's
/// `node_scrape_collector_duration_seconds` and `_success`, as `weave_scrape_collector_*{collector}`,
/// timed by `clock`.
enum CollectorRuns {
    static func collect(_ collectors: [any MetricCollector], clock: ElapsedClock = .continuous) async -> [MetricFamily] {
        var families: [MetricFamily] = []
        var claimed: Set<String> = []
        var durations: [([(String, String)], Double)] = []
        var successes: [([(String, String)], Double)] = []
        for collector in collectors {
            let start = clock.now
            let collected = await collector.collection(for: .openMetrics)
            let duration = clock.now - start
            var kept = collected.failure == nil
            for family in collected.families {
                let names = FamilyAdmission.renderedNames(family)
                guard !names.contains(where: claimed.contains) else {
                    kept = false
                    continue
                }
                claimed.formUnion(names)
                families.append(family)
            }
            durations.append(([("collector", collector.name)], duration.totalSeconds))
            successes.append(([("collector", collector.name)], kept ? 1 : 0))
        }
        return families + [
            .gauge("weave_scrape_collector_duration_seconds", "How long each of the daemon's own collectors took in this scrape.",
                   unit: "seconds", durations),
            .gauge("weave_scrape_collector_success",
                   "Whether the collector succeeded and every family of it was kept (1), or its collection failed or one was left out because another collector had rendered its name (0).",
                   successes),
        ]
    }
}
