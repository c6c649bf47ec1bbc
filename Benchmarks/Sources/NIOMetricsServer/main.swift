import FixtureHealthSource
import MetricsFixture
import NIOPosix
import WeaveHealthRoutes
import WeaveHealthServer

// /metrics (and /livez) of the 1,000-service fixture on 127.0.0.1:PORT, served by the daemon's own
// HTTP stack: WeaveHealthServer on plain SwiftNIO, one event-loop thread. Usage: NIOMetricsServer PORT

let port = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 9500
let lifecycle = ServerLifecycle()
lifecycle.markStarted()
let source = FixtureSource(fixture: MetricsFixture(services: 1_000))
let router = HealthRouter(policy: HealthPolicy(detailsPolicy: .always),
                          identity: FixtureSource.identity, collectors: source.collectors, source: source, lifecycle: lifecycle)
try await HealthServer(router: router, configuration: HealthServerConfiguration(listeners: [.tcp(host: "127.0.0.1", port: port)]),
                       group: MultiThreadedEventLoopGroup(numberOfThreads: 1)).run()
