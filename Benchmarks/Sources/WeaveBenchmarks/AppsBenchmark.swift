import Foundation
import MetricsFixture
import WeaveAppEndpoint
import WeaveDI
import WeaveHealth
import WeaveObservability
import WeavePrometheus

/// The application side of `Benchmarks/apps_bench.py`: an application with `services` resolved
/// services and as many health checks, served by `AppEndpoint` where weave-healthd discovers it;
/// and the in-process render its aggregation is compared with.
enum AppsBenchmark {
    /// `app [--resolve-buckets all|none|N] NAME DIRECTORY SERVICES [RESOLVE-SECONDS]` (default 10): serves until
    /// killed, with SERVICES checks that stay healthy and one, `flip`, that a file turns degraded.
    /// With RESOLVE-SECONDS it times single resolves on one thread for that long once serving,
    /// and prints one line: `resolve p50=… p999=… max=… n=…` (nanoseconds).
    static func serve(_ options: [String]) async throws {
        var arguments = options
        var buckets = ResolveBuckets.default
        if arguments.first == "--resolve-buckets", arguments.count > 1, let value = ResolveBuckets(arguments[1]) {
            buckets = value
            arguments.removeFirst(2)
        }
        guard arguments.count >= 3, let services = Int(arguments[2]) else {
            print("usage: WeaveBenchmarks app [--resolve-buckets all|none|N] NAME DIRECTORY SERVICES [RESOLVE-SECONDS]")
            exit(64)
        }
        let fixture = MetricsFixture(services: services)
        let monitor = HealthMonitor(container: fixture.container, defaultSettings: HealthCheckSettings(interval: .seconds(3_600)))
        for index in 0..<services { await monitor.register("check-\(index)") { .healthy } }
        // A check a benchmark flips: degraded while the file `<DIRECTORY>/<NAME>.degraded` exists,
        // run at the default interval, 10 s (`Benchmarks/watch_bench.py` times how soon the daemon
        // shows each flip, from the `changedAt` the application gives it).
        let flag = arguments[1] + "/" + arguments[0] + ".degraded"
        await monitor.register("flip", settings: HealthCheckSettings()) {
            access(flag, F_OK) == 0 ? .degraded(reason: "flipped") : .healthy
        }
        let endpoint = AppEndpoint(container: fixture.container,
                                   identity: ServiceIdentity(serviceID: arguments[0], description: "benchmark app", version: "1"),
                                   // Every /metrics renders: the benchmarks measure that work, not the once-a-second spacing.
                                   configuration: .init(socket: .discoverable(directory: arguments[1]), watchesMemoryPressure: false,
                                                        resolveBuckets: buckets, metricsReuse: .zero),
                                   monitor: monitor)
        let serving = Task { try await endpoint.run() }
        if arguments.count > 3, let seconds = Int(arguments[3]) {
            while !endpoint.router.lifecycle.isStarted { try await Task.sleep(for: .milliseconds(10)) }
            print("serving", terminator: "\n")
            fflush(nil)
            let summary = await Task.detached { LatencyRecorder.resolves(of: fixture.container, for: .seconds(seconds)) }.value
            print("resolve p50=\(Int(summary.p50)) p999=\(Int(summary.p999)) max=\(Int(summary.max)) n=\(summary.resolves)")
            fflush(nil)
        }
        try await serving.value
    }

    /// `render-apps SERVICES`: the median time, in microseconds over 30 runs, to collect and render
    /// (text format) what one application with SERVICES services and checks serves, in one process.
    static func render(_ arguments: [String]) async {
        let services = arguments.first.flatMap { Int($0) } ?? 2_000
        let fixture = MetricsFixture(services: services)
        let identity = ServiceIdentity(serviceID: "bench", description: "", version: "1")
        let collectors: [any MetricCollector] = [
            ContainerMetrics { fixture.container.statistics() }, HealthMetrics { fixture.report }, ProcessMetrics(), BuildInfo(identity: identity),
        ]
        var times: [Double] = []
        var parses: [Double] = []
        var rerenders: [Double] = []
        var size = 0
        for _ in 0..<30 {
            let start = ContinuousClock.now
            var families: [MetricFamily] = []
            for collector in collectors { families += await collector.collect() }
            let rendered = Exposition.render(families, format: .prometheusText)
            size = rendered.count
            let parseStart = ContinuousClock.now
            times.append(Harness.nanos(parseStart - start) / 1_000)
            // What the daemon does with the same bytes from applications: read them back relabelled, render again.
            let parsed = (try? ExpositionParser.parse(rendered, adding: [("app", "bench")])) ?? []
            let rerenderStart = ContinuousClock.now
            blackHole(Exposition.render(parsed, format: .prometheusText))
            parses.append(Harness.nanos(rerenderStart - parseStart) / 1_000)
            rerenders.append(Harness.nanos(ContinuousClock.now - rerenderStart) / 1_000)
        }
        func median(_ values: [Double]) -> Int { Int(values.sorted()[values.count / 2]) }
        print("render us=\(median(times)) bytes=\(size) parse_us=\(median(parses)) rerender_us=\(median(rerenders))")
    }
}
