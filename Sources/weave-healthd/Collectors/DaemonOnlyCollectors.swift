import WeavePrometheus

/// The daemon's collectors whose families only it may say (the applications' own vocabulary, the
/// container's and health families, `process_*` and `weave_build_info`, is not among them).
/// `FamilyAdmission.reservedPrefixes` must cover every name they render: a test renders them, so a
/// collector added here is reserved or the test fails.
enum DaemonOnlyCollectors {
    static func all(source: DaemonSource, reloads: ReloadMetrics) -> [any MetricCollector] {
        [PerfdataMetrics(source: source), SystemdUnitMetrics(source: source), TLSMetrics(source: source), LogMetrics(writer: .shared), reloads]
    }
}
