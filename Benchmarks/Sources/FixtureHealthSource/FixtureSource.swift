import MetricsFixture
import WeaveDI
import WeaveHealthServer
import WeavePrometheus

/// The fixture as WeaveHealthServer's source: its families, its report, no observed values.
public struct FixtureSource: HealthSource {
    public let fixture: MetricsFixture

    public init(fixture: MetricsFixture) {
        self.fixture = fixture
    }

    public func healthReport() async -> HealthReport { fixture.report }
    public func metricFamilies() async -> [MetricFamily] { fixture.families() }
    public func observedValue(of check: String) async -> (value: Double, unit: String)? { nil }
}
