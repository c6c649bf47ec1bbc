import CoreMetrics
import Foundation
import MetricsTestKit
import Synchronization
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

    /// A backend that takes its time to make a timer is not waited for on the resolving thread: the
    /// resolve returns while the backend is still making it, and the timing reaches the timer once
    /// it is made. (Before, the first timing of each dependency made its timer on the resolving
    /// thread: about 4 ms with swift-prometheus.) The backend is let go after 10 s if the resolve has
    /// not returned by then, so a resolve that waits fails the test instead of hanging it.
    @Test func aTimersMakingIsNotWaitedForOnTheResolvingThread() throws {
        let gate = Gate()
        let metrics = TestMetrics()
        let container = Container()
        let bridge = MetricsBridge(container: container, factory: SlowToMakeTimers(metrics: metrics, gate: gate))
        defer { bridge.cancel() }
        container.register(Made.self) { Made() }
        let letGo = Thread { if !gate.wait(untilOpenedWithin: 10) { gate.open() } }
        letGo.start()
        _ = container.resolve(Made.self)
        let returnedBeforeTheTimerWasMade = !gate.isOpen
        gate.open()
        #expect(returnedBeforeTheTimerWasMade)
        bridge.update() // records what was held, after waiting for the making under way
        let timer = try metrics.expectTimer("weave_resolve_duration_seconds", [("dependency", "Made"), ("path", "factory")])
        #expect(timer.values.count == 1)
    }
}

/// Opened once; waited for with a bound.
private final class Gate: Sendable {
    private let condition = Mutex(false)
    var isOpen: Bool { condition.withLock { $0 } }
    func open() { condition.withLock { $0 = true } }
    /// Whether it opened within `seconds`.
    func wait(untilOpenedWithin seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if isOpen { return true }
            usleep(1_000)
        }
        return isOpen
    }
}

/// `TestMetrics` whose timers are made only once `gate` opens.
private struct SlowToMakeTimers: MetricsFactory {
    let metrics: TestMetrics
    let gate: Gate

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        metrics.makeCounter(label: label, dimensions: dimensions)
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        metrics.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        metrics.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        _ = gate.wait(untilOpenedWithin: 3_600)
        return metrics.makeTimer(label: label, dimensions: dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) { metrics.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { metrics.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { metrics.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { metrics.destroyTimer(handler) }
}
