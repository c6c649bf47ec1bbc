// Compiled with the package trait Hummingbird only: `swift test --traits Hummingbird`.
#if Hummingbird
import Hummingbird
import HummingbirdTesting
import Testing
import WeaveAppEndpoint
import WeaveDI
import WeaveHealth
import WeaveHummingbird
import WeavePrometheus

private struct SlowDisk: HealthCheckable {
    func healthCheck() async -> HealthStatus { .degraded(reason: "disk 91% full") }
}

private final class Orders: Sendable {}

@Suite struct WeaveHummingbirdTests {
    /// The routes of an endpoint without a socket of its own, mounted beside the application's.
    func application() async -> (some ApplicationProtocol, Container) {
        let container = Container()
        container.register(Orders.self) { Orders() }
        container.register("disk", (any HealthCheckable).self, scope: .singleton) { SlowDisk() }
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "orders", description: "", version: "2.0.0"),
                                   configuration: .init(socket: .none))
        _ = await endpoint.monitor.checkAll()
        endpoint.router.lifecycle.markStarted()
        let router = Router()
        router.get("/orders") { _, _ in "[]" }
        router.addWeaveHealthRoutes(endpoint.router)
        return (Application(router: router), container)
    }

    @Test func servesTheEndpointsBesideTheApplicationsRoutes() async throws {
        let (app, container) = await application()
        _ = container.resolve(Orders.self)
        try await app.test(.router) { client in
            try await client.execute(uri: "/orders", method: .get) { #expect(String(buffer: $0.body) == "[]") }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
                #expect(String(buffer: response.body).contains("weave_resolutions_total{dependency=\"Orders\"} 1"))
            }
            try await client.execute(uri: "/metrics", method: .get, headers: [.accept: "application/openmetrics-text; version=1.0.0"]) { response in
                #expect(String(buffer: response.body).hasSuffix("# EOF\n"))
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                let body = String(buffer: response.body)
                #expect(body.contains("\"status\":\"warn\"") && body.contains("\"serviceId\":\"orders\""))
                #expect(!body.contains("91%"), "no details without opting in")
            }
            try await client.execute(uri: "/readyz?verbose", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("[+]disk ok"))
            }
            try await client.execute(uri: "/readyz/disk", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/readyz/nothing", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/livez?exclude=ping&verbose", method: .get) { response in
                #expect(String(buffer: response.body).contains("[+]ping excluded: ok"))
            }
            try await client.execute(uri: "/livez", method: .head) { response in
                #expect(response.status == .ok && response.body.readableBytes == 0)
            }
        }
    }
}

#endif
