import MetricsTestKit
import Testing
import WeaveDI
import WeaveObservability

private struct Made: Sendable {}

@Suite struct MetricsBridgeTests {
    @Test func metricsBridgeForwardsCountersAndTimers() throws {
        let metrics = TestMetrics()
        let container = Container()
        let bridge = MetricsBridge(container: container, factory: metrics)
        defer { bridge.cancel() }
        container.register(Made.self) { Made() }
        for _ in 0..<3 { _ = container.resolve(Made.self) }
        bridge.update()
        let resolutions = try metrics.expectCounter("weave_resolutions_total", [("dependency", "Made")])
        #expect(resolutions.totalValue == 3)
        for _ in 0..<2 { _ = container.resolve(Made.self) }
        bridge.update()
        #expect(resolutions.totalValue == 5)
        let timer = try metrics.expectTimer("weave_resolve_duration_seconds", [("dependency", "Made"), ("path", "factory")])
        #expect(timer.values.count == 5)
    }

    /// A registered dependency's counters, factory_failed among them when its factory can throw,
    /// are in the backend at 0 from the first update after its registration, before any resolve.
    @Test func countersExistAtZeroFromRegistration() throws {
        let metrics = TestMetrics()
        let container = Container()
        let bridge = MetricsBridge(container: container, factory: metrics)
        defer { bridge.cancel() }
        container.register(Made.self, throwingFactory: { Made() })
        bridge.update()
        #expect(try metrics.expectCounter("weave_resolutions_total", [("dependency", "Made")]).totalValue == 0)
        let failed = try metrics.expectCounter("weave_resolution_errors_total", [("dependency", "Made"), ("kind", "factory_failed")])
        #expect(failed.totalValue == 0)
        #expect(throws: (any Error).self) {
            try metrics.expectCounter("weave_resolution_errors_total", [("dependency", "Made"), ("kind", "not_registered")])
        }
    }
}
