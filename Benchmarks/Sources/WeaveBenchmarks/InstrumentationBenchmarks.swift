import Foundation
import WeaveDI
import WeavePrometheus

/// Issue 3's figures: the cost of instrumentation, snapshots under load, and a large health round.
enum InstrumentationBenchmarks {
    /// Median wall time of `statistics()` on a container with `keys` registered and resolved keys.
    static func snapshotMillis(keys: Int) -> (container: WeaveDI.Container, millis: Double) {
        let container = WeaveDI.Container()
        for index in 0..<keys {
            container.register("service-\(index)", Service.self, scope: .singleton) { Service(value: index) }
            _ = container.resolve("service-\(index)", Service.self)
        }
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
        let (container, _) = snapshotMillis(keys: keys)
        let report = healthReport(checks: keys)
        var bytes = 0
        var samples: [Double] = []
        for _ in 0..<31 {
            let took = Harness.elapsed {
                let families = ContainerMetrics.families(container.statistics()) + HealthMetrics.families(report)
                bytes = Exposition.render(families, format: .prometheusText).count
            }
            samples.append(Harness.nanos(took) / 1e6)
        }
        let body = Exposition.render(ContainerMetrics.families(container.statistics()) + HealthMetrics.families(report),
                                     format: .prometheusText)
        let series = body.split(separator: UInt8(ascii: "\n")).filter { $0.first != UInt8(ascii: "#") }.count
        return (samples.sorted()[samples.count / 2], bytes, series)
    }

    static func healthReport(checks: Int) -> HealthReport {
        var records: [String: HealthCheckRecord] = [:]
        for index in 0..<checks {
            let name = "check-\(index)"
            records[name] = HealthCheckRecord(name: name, status: .healthy, lastResult: .healthy, changedAt: 0, checkedAt: 0,
                                              lastDuration: .microseconds(index), consecutiveFailures: 0, consecutiveSuccesses: 1,
                                              groups: [])
        }
        return HealthReport(statuses: records.mapValues(\.status), checks: records)
    }

    /// p50/p99.9/max of single resolves on one thread while another renders `/metrics` of 1,000
    /// services in a loop (a scraper that never stops).
    static func resolveLatencyDuringRendering(_ container: WeaveDI.Container) -> (p50: Double, p999: Double, max: Double, snapshots: Int) {
        let report = healthReport(checks: 1_000)
        return resolveLatency(container) {
            blackHole(Exposition.render(ContainerMetrics.families(container.statistics()) + HealthMetrics.families(report),
                                        format: .prometheusText))
        }
    }

    /// p50/p99.9/max of single resolves on one thread while another takes snapshots in a loop.
    static func resolveLatencyDuringSnapshots(_ container: WeaveDI.Container) -> (p50: Double, p999: Double, max: Double, snapshots: Int) {
        resolveLatency(container) { blackHole(container.statistics()) }
    }

    private static func resolveLatency(_ container: WeaveDI.Container, resolves: Int = 2_000_000,
                                       load: @escaping @Sendable () -> Void) -> (p50: Double, p999: Double, max: Double, snapshots: Int) {
        container.register(Service.self, scope: .singleton) { Service() }
        let stop = Guarded(false)
        let snapshots = Guarded(0)
        let snapshotter = Thread {
            while !stop.withLock({ $0 }) {
                load()
                snapshots.withLock { $0 += 1 }
            }
        }
        snapshotter.start()
        var latencies = [UInt64](repeating: 0, count: resolves)
        latencies.withUnsafeMutableBufferPointer { buffer in
            for index in 0..<resolves {
                let start = DispatchTime.now().uptimeNanoseconds
                blackHole(container.resolve(Service.self))
                buffer[index] = DispatchTime.now().uptimeNanoseconds - start
            }
        }
        stop.withLock { $0 = true }
        while !snapshotter.isFinished { usleep(1_000) }
        latencies.sort()
        func at(_ q: Double) -> Double { Double(latencies[min(latencies.count - 1, Int(q * Double(latencies.count)))]) }
        return (at(0.5), at(0.999), Double(latencies.last!), snapshots.withLock { $0 })
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
