// Compiled with the package trait Hummingbird only: `swift test --traits Hummingbird`.
#if Hummingbird
import Glibc
import Hummingbird
import HummingbirdTesting
import InMemoryTracing
import Testing
import Tracing
import WeaveAppEndpoint
import WeaveDI
import WeaveHealth
import WeaveHummingbird
import WeavePrometheus
import WeaveTracing

private struct SlowDisk: HealthCheckable {
    func healthCheck() async -> HealthStatus { .degraded(reason: "disk 91% full") }
}

private final class Orders: Sendable {}
private final class Pricing: Sendable {}
private final class Stock: Sendable {}

/// The process's tracer, bootstrapped once (the bootstrap is process-wide): Hummingbird's
/// `TracingMiddleware` and the container's spans both use it.
private let bootstrappedTracer: InMemoryTracer = {
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    return tracer
}()

@Suite struct WeaveHummingbirdTests {
    /// The routes of an endpoint without a socket of its own, mounted beside the application's.
    func application(_ mount: HealthRouter.Mount = .all) async -> (some ApplicationProtocol, Container) {
        let container = Container()
        container.register(Orders.self) { Orders() }
        container.register("disk", (any HealthCheckable).self, scope: .singleton) { SlowDisk() }
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "orders", description: "", version: "2.0.0"),
                                   configuration: .init(socket: .none))
        _ = await endpoint.monitor.checkAll()
        endpoint.router.lifecycle.markStarted()
        let router = Router()
        router.get("/orders") { _, _ in "[]" }
        router.addWeaveHealthRoutes(endpoint.router, mount)
        return (Application(router: router), container)
    }

    /// By default the application's own port serves the probes only (#65): its dependencies' names,
    /// timings and errors (`/metrics`, `/dependencies`, `/events`) are for the socket, or opted in.
    @Test func theDefaultMountIsTheProbes() async throws {
        let (app, _) = await application(.probes)
        try await app.test(.router) { client in
            for path in ["/metrics", "/dependencies", "/events"] {
                try await client.execute(uri: path, method: .get) { #expect($0.status == .notFound, "\(path)") }
            }
            for path in ["/health", "/livez", "/readyz", "/readyz/disk"] {
                try await client.execute(uri: path, method: .get) { #expect($0.status == .ok, "\(path)") }
            }
        }
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

    /// Hummingbird's `TracingMiddleware` makes a request a span; the factory runs it causes are spans
    /// under it (#55), through the tracer the process bootstrapped, each under the run it was made in,
    /// with its attributes, and lasting at least what its factory slept. A second request finds the
    /// singleton made: no span.
    @Test func factoryRunsAreSpansInsideTheRequestsSpan() async throws {
        let tracer = bootstrappedTracer
        let container = Container()
        container.register(Stock.self, scope: .singleton) { usleep(20_000); return Stock() }
        container.register(Pricing.self) { usleep(10_000); _ = container.resolve(Stock.self); return Pricing() }
        container.register(Orders.self) { usleep(5_000); _ = container.resolve(Pricing.self); return Orders() }
        #expect(container.traceFactoryRunsWithBootstrappedTracer())
        let router = Router()
        router.middlewares.add(TracingMiddleware())
        router.get("/report") { _, _ in container.resolve(Stock.self) != nil && container.resolve(Orders.self) != nil ? "ok" : "no" }
        tracer.clearAll()
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/report", method: .get) { #expect(String(buffer: $0.body) == "ok") }
        }
        let spans = tracer.finishedSpans
        let request = try #require(spans.first { $0.parentSpanID == nil })
        #expect(request.operationName == "/report")
        let byName = Dictionary(spans.map { ($0.operationName, $0) }) { first, _ in first }
        let stock = try #require(byName["resolve Stock"]), pricing = try #require(byName["resolve Pricing"])
        let orders = try #require(byName["resolve Orders"])
        #expect(spans.count == 4, "the request and three runs: \(spans.map(\.operationName))")
        #expect(stock.parentSpanID == request.spanID, "Stock was made first, by the route itself")
        #expect(orders.parentSpanID == request.spanID && pricing.parentSpanID == orders.spanID)
        #expect(pricing.attributes.get("weave.path") == .string("Orders") && stock.attributes.get("weave.scope") == .string("singleton"))
        // Each run's span lies inside its parent's (the times against the factories' own clocks are
        // WeaveTracingTests' known truth).
        for (span, parent) in [(stock, request), (orders, request), (pricing, orders)] {
            #expect(span.startInstant.nanosecondsSinceEpoch >= parent.startInstant.nanosecondsSinceEpoch
                        && span.endInstant.nanosecondsSinceEpoch <= parent.endInstant.nanosecondsSinceEpoch
                        && span.startInstant.nanosecondsSinceEpoch < span.endInstant.nanosecondsSinceEpoch,
                    "\(span.operationName) inside \(parent.operationName)")
        }
        tracer.clearAll()
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/report", method: .get) { _ in }
        }
        #expect(tracer.finishedSpans.map(\.operationName).filter { $0.hasPrefix("resolve") } == ["resolve Pricing", "resolve Orders"],
                "the held Stock makes no span")
    }
}

#endif
