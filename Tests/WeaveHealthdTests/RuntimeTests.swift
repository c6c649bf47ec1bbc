import NIOPosix
import Testing
@testable import weave_healthd

@Suite struct RuntimeTests {
    /// The daemon's checks live in its container, and its rounds are not resolves: after several
    /// rounds each check was made once and resolved never, so `weave_resolutions_total` of the
    /// daemon counts only what resolved a service.
    @Test func roundsOfTheDaemonsChecksAreNotResolves() async throws {
        let configuration = try ConfigurationLoader(file: "test.yaml", text: """
            checks:
              - {name: container, type: container, interval: 1h}
              - {name: root, type: disk, path: /, interval: 1h}
            apps: {discover: false}

            """).parse()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let runtime = await Runtime(configuration: configuration, group: group, connections: ConnectionPool(capacity: 16))
        await runtime.firstRound()
        for _ in 0..<3 { _ = await runtime.monitor.checkAll() }
        let services = runtime.container.statistics().services
        #expect(services.map(\.service).sorted() == ["container (HealthCheckable)", "root (HealthCheckable)"])
        for service in services {
            #expect(service.resolutions == 0, "\(service.service)")
            #expect(service.instancesCreated == 1, "\(service.service)")
        }
        try await group.shutdownGracefully()
    }
}
