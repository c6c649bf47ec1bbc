import NIOCore
import NIOPosix
import Synchronization
import Testing
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
@testable import WeaveHealthd
import WeaveTestSupport

/// A runtime of `checks` (YAML list items, indented two spaces), without applications.
private func runtime(checks: String, group: MultiThreadedEventLoopGroup) async throws -> Runtime {
    let configuration = try ConfigurationLoader(file: "test.yaml", text: "checks:\n" + checks + "apps: {discover: false}\n").parse()
    return await Runtime(configuration: configuration, shared: DaemonShared(group: group, connections: ConnectionPool(capacity: 16), blocking: BlockingCalls()))
}

@Suite struct MonitorServiceTests {
    /// The first round waits for the listeners, so a check of the daemon's own port cannot race the
    /// bind (a lost race held readiness down until the check's next round).
    @Test func theFirstRoundWaitsForTheListeners() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let source = DaemonSource(try await runtime(checks: "  - {name: container, type: container, interval: 1h}\n", group: group))
        let lifecycle = ServerLifecycle()
        let listening = Mutex(false)
        let (reloads, _) = AsyncStream<Runtime>.makeStream()
        let service = MonitorService(source: source, lifecycle: lifecycle, reloads: reloads, listening: { listening.withLock { $0 } })
        let running = Task { try await service.run() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!lifecycle.isStarted)
        #expect(source.runtime.monitor.latestReport.checks.isEmpty)
        listening.withLock { $0 = true }
        await eventually { lifecycle.isStarted }
        #expect(lifecycle.isStarted)
        #expect(source.runtime.monitor.latestReport.checks.count == 1)
        running.cancel()
        _ = await running.result
        try await group.shutdownGracefully()
    }

    /// The daemon's checks live in its container, and its rounds are not resolves: after several
    /// rounds each check was made once and resolved never, so `weave_resolutions_total` of the
    /// daemon counts only what resolved a service.
    @Test func roundsOfTheDaemonsChecksAreNotResolves() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let runtime = try await runtime(checks: """
              - {name: container, type: container, interval: 1h}
              - {name: root, type: disk, path: /, interval: 1h}

            """, group: group)
        for _ in 0..<4 { _ = await runtime.monitor.checkAll() }
        let services = runtime.container.statistics().services
        #expect(services.map(\.service).sorted() == ["container (HealthCheckable)", "root (HealthCheckable)"])
        for service in services {
            #expect(service.resolutions == 0, "\(service.service)")
            #expect(service.instancesCreated == 1, "\(service.service)")
        }
        try await group.shutdownGracefully()
    }
}
