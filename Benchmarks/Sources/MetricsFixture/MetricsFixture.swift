import WeaveDI
import WeaveHealth
import WeaveObservability
import WeavePrometheus

/// What the /metrics benchmarks serve: a container with `services` registered and resolved
/// services, and a health report with as many checks, as the daemon's scrape renders them.
public struct MetricsFixture: Sendable {
    public let container: WeaveDI.Container
    public let report: HealthReport

    public init(services: Int) {
        container = WeaveDI.Container()
        for index in 0..<services {
            container.register("service-\(index)", FixtureService.self, scope: .singleton) { FixtureService(value: index) }
            _ = container.resolve("service-\(index)", FixtureService.self)
        }
        report = Self.healthReport(checks: services)
    }

    /// The container's and the checks' families (the servers add `process_*` and build info).
    public func families() -> [MetricFamily] {
        ContainerMetrics.families(container.statistics()) + HealthMetrics.families(report)
    }

    /// A report of `checks` healthy checks, each with a different last duration.
    public static func healthReport(checks: Int) -> HealthReport {
        var records: [String: HealthCheckRecord] = [:]
        for index in 0..<checks {
            let name = "check-\(index)"
            records[name] = HealthCheckRecord(name: name, status: .healthy, lastResult: .healthy, changedAt: 0, checkedAt: 0,
                                              lastDuration: .microseconds(index), consecutiveFailures: 0, consecutiveSuccesses: 1,
                                              groups: [])
        }
        return HealthReport(checks: records)
    }
}

/// The registered service type.
public final class FixtureService: Sendable {
    public let value: Int
    init(value: Int) { self.value = value }
}
