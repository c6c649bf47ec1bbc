import WeavePrometheus

/// The metric families of one check type (`CheckMetrics`), from what the current runtime's checks
/// of that type observed; named `check_<type>`.
struct CheckTypeMetrics: MetricCollector {
    let type: any CheckMetrics.Type
    let source: DaemonSource

    var name: String { "check_\(type.typeName)" }

    func collect() async -> [MetricFamily] {
        type.families(source.runtime.observations)
    }
}
