import MetricsFixture
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeavePrometheus

/// The fixture as a HealthRouter's source and collector: its report, its families, no observed values.
public struct FixtureSource: HealthSource, MetricCollector {
    public let fixture: MetricsFixture

    public init(fixture: MetricsFixture) {
        self.fixture = fixture
    }

    public func healthReport() -> HealthReport { fixture.report }
    public func collect() async -> [MetricFamily] { fixture.families() }

    /// The router's collectors, as the daemon has them: the fixture's families, `process_*`, build info.
    public var collectors: [any MetricCollector] {
        [self, ProcessMetrics(), BuildInfo(identity: Self.identity)]
    }

    public static let identity = ServiceIdentity(serviceID: "fixture", description: "the benchmark fixture", version: "0")
    public func observedValue(of check: String) -> (value: Double, unit: String)? { nil }
}
