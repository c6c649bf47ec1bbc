import FixtureHealthSource
import Foundation
import MetricsFixture
import NIOPosix
import WeaveDI
import WeaveHealthRoutes
import WeaveHealthServer
import WeavePrometheus

/// Resolve latency in this process while `wrk -c 4` scrapes `/metrics` of 1,000 services served by
/// WeaveHealthServer in this same process (one event-loop thread, as the daemon runs it).
enum ScrapeBenchmark {
    struct Result {
        let latency: LatencySummary
        /// wrk's `Requests/sec` and its latency line for the scrapes.
        let scrapesPerSecond: String
        let scrapeLatency: String
    }

    static func run(seconds: Int = 10) async throws -> Result {
        let fixture = MetricsFixture(services: 1_000)
        let lifecycle = ServerLifecycle()
        lifecycle.markStarted()
        let source = FixtureSource(fixture: fixture)
        let router = HealthRouter(policy: HealthPolicy(detailsPolicy: .always),
                                  identity: FixtureSource.identity, collectors: source.collectors, source: source, lifecycle: lifecycle)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = HealthServer(router: router, configuration: HealthServerConfiguration(listeners: [.tcp(host: "127.0.0.1", port: 0)]),
                                  group: group)
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        while server.boundListeners == nil { try await Task.sleep(for: .milliseconds(10)) }
        let address = server.boundListeners![0]

        let wrk = Process()
        wrk.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
        wrk.arguments = ["-t", "2", "-c", "4", "-d", "\(seconds)s", "--latency", "http://\(address)/metrics"]
        let output = Pipe()
        wrk.standardOutput = output
        try wrk.run()
        // Time resolves while the scrapes run, leaving a second at each end for wrk to start and stop.
        try await Task.sleep(for: .seconds(1))
        let latency = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: LatencyRecorder.resolves(of: fixture.container, for: .seconds(seconds - 2)))
            }.start()
        }
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        wrk.waitUntilExit()
        func line(_ prefix: String) -> String {
            report.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(prefix) } ?? "?"
        }
        return Result(latency: latency, scrapesPerSecond: line("Requests/sec:"), scrapeLatency: line("Latency "))
    }
}
