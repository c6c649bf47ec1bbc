import WeavePrometheus

/// The perfdata of the current runtime's exec checks, `{check,label}`, one family per kind of unit
/// so that each name says its unit: `weave_check_perfdata_seconds`, `_bytes`, `_ratio`, `_total`
/// (unit `c`, a counter) and `_value` (no unit).
struct PerfdataMetrics: MetricCollector {
    let source: DaemonSource

    func collect() async -> [MetricFamily] {
        var samples: [Perfdata.Kind: [([(String, String)], Double)]] = [:]
        for (check, items) in source.runtime.observations.allPerfdata.sorted(by: { $0.key < $1.key }) {
            for item in items { samples[item.kind, default: []].append(([("check", check), ("label", item.label)], item.value)) }
        }
        let help = "Perfdata of exec checks (Nagios plugins)"
        return [
            .gauge("weave_check_perfdata_seconds", help + " measured in time, in seconds.", unit: "seconds", samples[.seconds] ?? []),
            .gauge("weave_check_perfdata_bytes", help + " measured in bytes (B, KB, MB, GB, TB).", unit: "bytes", samples[.bytes] ?? []),
            .gauge("weave_check_perfdata_ratio", help + " given in percent, as a ratio (80% is 0.8).", unit: "ratio", samples[.ratio] ?? []),
            .counter("weave_check_perfdata", help + " that are continuous counters (unit c).", samples[.counter] ?? []),
            .gauge("weave_check_perfdata_value", help + " without a unit.", samples[.plain] ?? []),
        ]
    }
}
