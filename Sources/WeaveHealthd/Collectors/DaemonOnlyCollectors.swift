import WeavePrometheus
import WeaveSystemd

/// The daemon's collectors whose families only it may say (the applications' own vocabulary, the
/// container's and health families, `process_*` and `weave_build_info`, is not among them).
/// `FamilyAdmission.reservedPrefixes` must cover every name they render: a test renders them, so a
/// collector added here is reserved or the test fails.
enum DaemonOnlyCollectors {
    static func all(source: DaemonSource, reloads: ReloadMetrics, journal: JournalWriter) -> [any MetricCollector] {
        CheckTypes.withMetrics.map { CheckTypeMetrics(type: $0, source: source) } + [LogMetrics(writer: journal), reloads]
    }
}
