import WeavePrometheus

/// `weave_check_perfdata{check,label}`: the perfdata of the current runtime's exec checks, in base units.
struct PerfdataMetrics: MetricCollector {
    let source: DaemonSource

    func collect() async -> [MetricFamily] {
        var samples: [([(String, String)], Double)] = []
        for (check, items) in source.runtime.observations.allPerfdata.sorted(by: { $0.key < $1.key }) {
            for item in items { samples.append(([("check", check), ("label", item.label)], item.value)) }
        }
        return [.gauge("weave_check_perfdata", "Perfdata of exec checks (Nagios plugins), converted to base units.", samples)]
    }
}
