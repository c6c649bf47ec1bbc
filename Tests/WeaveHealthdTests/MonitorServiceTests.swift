import NIOPosix
import Synchronization
import Testing
import WeaveHealthServer
@testable import weave_healthd

@Suite struct MonitorServiceTests {
    /// The first round waits for the listeners, so a check of the daemon's own port cannot race the
    /// bind (a lost race held readiness down until the check's next round).
    @Test func theFirstRoundWaitsForTheListeners() async throws {
        let configuration = try ConfigurationLoader(file: "test.yaml", text: """
            checks:
              - {name: container, type: container, interval: 1h}
            apps: {discover: false}

            """).parse()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let source = DaemonSource(await Runtime(configuration: configuration, group: group, connections: ConnectionPool(capacity: 16)))
        let lifecycle = ServerLifecycle()
        let listening = Mutex(false)
        let (reloads, _) = AsyncStream<Void>.makeStream()
        let service = MonitorService(source: source, lifecycle: lifecycle, reloads: reloads, listening: { listening.withLock { $0 } })
        let running = Task { try await service.run() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!lifecycle.isStarted)
        #expect(source.runtime.monitor.latestReport.checks.isEmpty)
        listening.withLock { $0 = true }
        let deadline = ContinuousClock.now + .seconds(10)
        while !lifecycle.isStarted, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(lifecycle.isStarted)
        #expect(source.runtime.monitor.latestReport.checks.count == 1)
        running.cancel()
        _ = await running.result
        try await group.shutdownGracefully()
    }
}
