// Compiled with the package trait Vapor only: `swift test --traits Vapor`.
#if Vapor
import Foundation
import Testing
import Vapor
import VaporTesting
import WeaveAppEndpoint
import WeaveDI
import WeaveHealth
import WeavePrometheus
import WeaveVapor
import WeaveTestSupport

private struct Failing: HealthCheckable {
    struct Down: Error {}
    func healthCheck() async -> HealthStatus { .unhealthy(error: Down()) }
}

private final class Orders: Sendable {}

@Suite struct WeaveVaporTests {
    @Test func servesTheEndpointsBesideTheApplicationsRoutes() async throws {
        let container = Container()
        container.register(Orders.self) { Orders() }
        container.register("queue", (any HealthCheckable).self, scope: .singleton) { Failing() }
        _ = container.resolve(Orders.self)
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "orders", description: "", version: "3.1.0"),
                                   configuration: .init(socket: .none))
        _ = await endpoint.monitor.checkAll()
        endpoint.router.lifecycle.markStarted()

        let app = try await Application.make(.testing)
        app.get("orders") { _ in "[]" }
        app.addWeaveHealthRoutes(endpoint.router, .all)
        do {
            let tester = try app.testing()
            try await tester.test(.GET, "orders") { #expect($0.body.string == "[]") }
            try await tester.test(.GET, "metrics") { response in
                #expect(response.status == .ok)
                #expect(response.headers.first(name: .contentType) == "text/plain; version=0.0.4; charset=utf-8")
                #expect(response.body.string.contains("weave_resolutions_total{dependency=\"Orders\"} 1"))
            }
            try await tester.test(.GET, "metrics", headers: ["Accept": "application/openmetrics-text; version=1.0.0"]) { response in
                #expect(response.body.string.hasSuffix("# EOF\n"))
            }
            try await tester.test(.GET, "health") { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.body.string.contains("\"status\":\"fail\"") && !response.body.string.contains("Down"))
            }
            try await tester.test(.GET, "readyz?verbose") { response in
                #expect(response.status == .serviceUnavailable && response.body.string.contains("[-]queue failed"))
            }
            try await tester.test(.GET, "readyz/queue") { #expect($0.status == .serviceUnavailable) }
            try await tester.test(.GET, "readyz?exclude=queue") { #expect($0.status == .ok) }
            try await tester.test(.GET, "livez") { #expect($0.status == .ok && $0.body.string == "ok\n") }
            try await tester.test(.HEAD, "livez") { #expect($0.status == .ok && $0.body.readableBytes == 0) }
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    /// By default the application's port serves the probes only (#65): its dependencies' names,
    /// timings and errors (`/metrics`, `/dependencies`, `/events`) are for the socket, or opted in.
    @Test func theDefaultMountIsTheProbes() async throws {
        let container = Container()
        container.register("queue", (any HealthCheckable).self, scope: .singleton) { Failing() }
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "orders", description: "", version: "3.1.0"),
                                   configuration: .init(socket: .none))
        _ = await endpoint.monitor.checkAll()
        endpoint.router.lifecycle.markStarted()
        let app = try await Application.make(.testing)
        app.addWeaveHealthRoutes(endpoint.router)
        do {
            let tester = try app.testing()
            for path in ["metrics", "dependencies", "events"] {
                try await tester.test(.GET, path) { #expect($0.status == .notFound, "\(path)") }
            }
            try await tester.test(.GET, "readyz/queue") { #expect($0.status == .serviceUnavailable) }
            try await tester.test(.GET, "livez") { #expect($0.status == .ok) }
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    @Test func runsTheEndpointFromBootToAGracefulShutdown() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weave-vapor-\(getpid())").path
        let socket = directory + "/billing.sock"
        let container = Container()
        container.register("ledger", (any HealthCheckable).self, scope: .singleton) { Failing() }
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "billing", description: "", version: "1.0.0"),
                                   configuration: .init(socket: .discoverable(directory: directory)))
        let app = try await Application.make(.testing)
        app.addWeaveEndpoint(endpoint)
        app.addWeaveHealthRoutes(endpoint.router)
        let tester = try app.testing() // boots the application: the endpoint starts, not marked by hand
        var ready = false
        while !ready {
            try await tester.test(.GET, "readyz?exclude=ledger") { ready = $0.status == .ok }
            if !ready { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(ready) // the first round ran and readiness passed
        await eventually { endpoint.boundListeners != nil }
        #expect(endpoint.boundListeners == ["unix:" + socket])
        #expect(FileManager.default.fileExists(atPath: socket))
        try await tester.test(.GET, "readyz/ledger") { #expect($0.status == .serviceUnavailable) }
        try await app.asyncShutdown()
        // A graceful shutdown: the application left, so its socket is gone.
        #expect(!FileManager.default.fileExists(atPath: socket))
        try? FileManager.default.removeItem(atPath: directory)
    }
}

#endif
