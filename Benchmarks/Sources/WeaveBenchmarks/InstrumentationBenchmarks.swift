import Foundation
import MetricsFixture
import WeaveDI
import WeaveHealth
import WeaveObservability
import WeavePrometheus

/// Issue 3's figures: the cost of instrumentation, snapshots under load, and a large health round.
enum InstrumentationBenchmarks {
    /// Median wall time of `statistics()` on a container with `keys` registered and resolved keys.
    static func snapshotMillis(keys: Int) -> (container: WeaveDI.Container, millis: Double) {
        let container = MetricsFixture(services: keys).container
        var samples: [Double] = []
        for _ in 0..<51 {
            let took = Harness.elapsed { blackHole(container.statistics()) }
            samples.append(Harness.nanos(took) / 1e6)
        }
        return (container, samples.sorted()[samples.count / 2])
    }

    /// Median time and body size of rendering `/metrics` (text format) for a container with `keys`
    /// resolved services and as many health checks, as the daemon's scrape does.
    static func render(keys: Int) -> (millis: Double, bytes: Int, series: Int) {
        let fixture = MetricsFixture(services: keys)
        var bytes = 0
        var samples: [Double] = []
        for _ in 0..<31 {
            let took = Harness.elapsed {
                bytes = Exposition.render(fixture.families(), format: .prometheusText).count
            }
            samples.append(Harness.nanos(took) / 1e6)
        }
        let body = Exposition.render(fixture.families(), format: .prometheusText)
        let series = body.split(separator: UInt8(ascii: "\n")).filter { $0.first != UInt8(ascii: "#") }.count
        return (samples.sorted()[samples.count / 2], bytes, series)
    }

    /// Resolve latency on this thread while another renders `/metrics` of 1,000 services in a loop
    /// (a scraper that never stops).
    static func resolveLatencyDuringRendering(_ container: WeaveDI.Container) -> (LatencySummary, loads: Int) {
        let report = MetricsFixture.healthReport(checks: 1_000)
        return resolveLatency(container) {
            blackHole(Exposition.render(ContainerMetrics.families(container.statistics()) + HealthMetrics.families(report),
                                        format: .prometheusText))
        }
    }

    /// Resolve latency on this thread while another takes snapshots in a loop.
    static func resolveLatencyDuringSnapshots(_ container: WeaveDI.Container) -> (LatencySummary, loads: Int) {
        resolveLatency(container) { blackHole(container.statistics()) }
    }

    /// Resolve latency for `duration` while another thread runs `load` over and over; how many loads ran.
    private static func resolveLatency(_ container: WeaveDI.Container, for duration: Duration = .seconds(2),
                                       load: @escaping @Sendable () -> Void) -> (LatencySummary, loads: Int) {
        let stop = Guarded(false)
        let loads = Guarded(0)
        let loader = Thread {
            while !stop.withLock({ $0 }) {
                load()
                loads.withLock { $0 += 1 }
            }
        }
        loader.start()
        let summary = LatencyRecorder.resolves(of: container, for: duration)
        stop.withLock { $0 = true }
        while !loader.isFinished { usleep(1_000) }
        return (summary, loads.withLock { $0 })
    }

    /// Wall time of one health round of `count` checks, `hanging` of which never return.
    static func healthRound(count: Int, hanging: Int, timeout: Duration) async -> Double {
        let monitor = HealthMonitor(container: WeaveDI.Container(), defaultSettings: HealthCheckSettings(timeout: timeout))
        for index in 0..<count {
            if index < hanging {
                await monitor.register("hang-\(index)") {
                    // Parked, never resumed, and not leaked: a check stuck for good.
                    await withCheckedContinuation { continuation in parked.withLock { $0.append(continuation) } }
                    return .healthy
                }
            } else {
                await monitor.register("ok-\(index)") { .healthy }
            }
        }
        let clock = ContinuousClock()
        let start = clock.now
        let report = await monitor.checkAll()
        precondition(report.statuses.count == count)
        return Harness.nanos(clock.now - start) / 1e6
    }
}

private let parked = Guarded<[CheckedContinuation<Void, Never>]>([])

/// A value behind an NSLock, for the benchmark's own bookkeeping.
final class Guarded<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}
