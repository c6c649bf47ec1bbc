import MetricsTestKit
import Testing
@testable import WeaveDI

private struct Made: Sendable {}
private final class Shared: Sendable {}

@Suite struct StatisticsTests {
    @Test func countsAndHistogramsPerKey() {
        let container = Container()
        container.register(Made.self) { Made() }
        container.register(Shared.self, scope: .singleton) { Shared() }
        for _ in 0..<10 { _ = container.resolve(Made.self) }
        for _ in 0..<1_000 { _ = container.resolve(Shared.self) }
        let statistics = container.statistics()
        let made = statistics["Made"]
        #expect(made?.resolutions == 10)
        #expect(made?.instancesCreated == 10)
        #expect(made?.factoryLatency.count == 10)
        #expect(made?.cachedHitLatency.count == 0)
        let shared = statistics["Shared"]
        #expect(shared?.resolutions == 1_000)
        #expect(shared?.instancesCreated == 1)
        #expect(shared?.factoryLatency.count == 1)
        // One cached hit in 64 per thread is timed; this thread may have counted down elsewhere first.
        let sampled = shared?.cachedHitLatency.count ?? 0
        #expect(sampled >= 999 / UInt64(Container.hitSamplingInterval) - 1 && sampled <= 999 / UInt64(Container.hitSamplingInterval) + 1)
        #expect(shared?.isInstantiated == true)
        #expect(LatencyHistogram.bounds.first == 1e-6 && LatencyHistogram.bounds.last == 10)
    }

    @Test func uninstrumentedContainersCountButDoNotTime() {
        let container = Container(instrumented: false)
        container.register(Made.self) { Made() }
        for _ in 0..<200 { _ = container.resolve(Made.self) }
        let made = container.statistics()["Made"]
        #expect(made?.resolutions == 200)
        #expect(made?.factoryLatency.count == 0)
    }

    @Test func histogramQuantilesAndCumulativeCounts() {
        let histogram = LatencyHistogram(counts: [0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], sumNanos: 30_000)
        #expect(histogram.count == 10)
        #expect(histogram.cumulativeCounts.last == 10)
        #expect(histogram.cumulativeCounts[0] == 0 && histogram.cumulativeCounts[1] == 10)
        let median = histogram.quantile(0.5)!
        #expect(median > 1e-6 && median <= 5e-6)
        #expect(LatencyHistogram.empty.quantile(0.5) == nil)
        #expect(histogram.sumSeconds == 30e-6)
    }

    @Test func exactCountsUnderAnEightTaskStress() async {
        let container = Container()
        container.register(Made.self) { Made() }
        container.register(Shared.self, scope: .singleton) { Shared() }
        let perTask = 20_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for step in 0..<perTask {
                        if (step + task) % 4 == 0 {
                            _ = container.resolve(Made.self)
                        } else if step % 1_000 == 999 {
                            _ = container.resolve(Settings.self) // not registered: an error
                        } else {
                            _ = container.resolve(Shared.self)
                        }
                    }
                }
            }
        }
        let expectedMade = (0..<8).reduce(0) { total, task in
            total + (0..<perTask).filter { ($0 + task) % 4 == 0 }.count
        }
        let expectedMisses = (0..<8).reduce(0) { total, task in
            total + (0..<perTask).filter { ($0 + task) % 4 != 0 && $0 % 1_000 == 999 }.count
        }
        let statistics = container.statistics()
        #expect(statistics["Made"]?.resolutions == UInt64(expectedMade))
        #expect(statistics["Made"]?.instancesCreated == UInt64(expectedMade))
        #expect(statistics["Made"]?.factoryLatency.count == UInt64(expectedMade))
        #expect(statistics["Shared"]?.resolutions == UInt64(8 * perTask - expectedMade - expectedMisses))
        #expect(statistics["Shared"]?.instancesCreated == 1)
        #expect(statistics["Settings"]?.errors[.notRegistered] == UInt64(expectedMisses))
    }

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
}
