import Foundation
import NIOCore
import Testing
import WeaveAppEndpoint
import WeaveHealth
@testable import WeaveHealthRoutes
import WeaveObservability
import WeavePrometheus

/// An application endpoint's router: the standard routes and the container's.
private func applicationRouter(routes: [HealthRoute] = []) -> HealthRouter {
    let container = Container()
    return HealthRouter(identity: ServiceIdentity(serviceID: "orders", description: "", version: "1"), collectors: [],
                        source: NoChecks(), lifecycle: ServerLifecycle(),
                        routes: [.dependencies { container.statistics() }, .events(ContainerEventLog())] + routes)
}

@Suite struct HealthRouteTests {
    /// docs/endpoints.md's table lists exactly the routes an application's router answers (the daemon
    /// answers the same paths): path, methods, formats.
    @Test func theDocumentedTableIsTheRouteTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/endpoints.md"), encoding: .utf8)
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `/") }.map { line in
            line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let documented = rows.map { [$0[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), $0[1], $0[2]] }
        let declared = applicationRouter().routes.map { [$0.path, $0.methods.joined(separator: ", "), $0.formats.joined(separator: ", ")] }
        #expect(documented == declared)
    }

    @Test func pathsFindTheirRoutes() {
        let router = applicationRouter()
        #expect(router.route(for: "/")?.path == "/")
        #expect(router.route(for: "/readyz")?.path == "/readyz")
        #expect(router.route(for: "/readyz/orders/db")?.path == "/readyz/<name>")
        #expect(router.route(for: "/readyz/") == nil)
        #expect(router.route(for: "/metrics/") == nil)
        #expect(router.route(for: "metrics") == nil)
        #expect(router.routes.filter(\.isProbe).map(\.path) == ["/livez", "/readyz", "/readyz/<name>"])
        #expect(router.mountedRoutes.map(\.path) == ["/metrics", "/health", "/livez", "/readyz", "/readyz/<name>", "/dependencies", "/events"])
        // Without the container's rows there are no such routes.
        let bare = HealthRouter(identity: ServiceIdentity(serviceID: "x", description: "", version: "1"), collectors: [],
                                source: NoChecks(), lifecycle: ServerLifecycle())
        #expect(bare.route(for: "/dependencies") == nil && bare.route(for: "/events") == nil)
    }

    /// A program adds a route as a row, and a row with a standard route's path replaces it in place.
    @Test func rowsAddRoutesAndReplaceStandardOnes() async {
        let page = HealthRoute(components: [], formats: [HealthRoute.html], isMounted: false, roles: [.all],
                               responder: .rendered { _, router in router.text(200, "own page\n") })
        let extra = HealthRoute(components: ["version"], formats: ["text/plain; charset=utf-8"],
                                responder: .immediate { _, router in router.text(200, router.identity.version + "\n") })
        let router = applicationRouter(routes: [page, extra])
        #expect(router.routes.map(\.path) == ["/", "/metrics", "/health", "/livez", "/readyz", "/readyz/<name>",
                                              "/dependencies", "/events", "/version"])
        #expect(String(buffer: await router.handle(HealthRequest(method: "GET", uri: "/")).body) == "own page\n")
        #expect(await router.handle(HealthRequest(method: "GET", uri: "/"), role: .metrics).status == 404, "the row's roles hold")
        #expect(router.respondNow(HealthRequest(method: "GET", uri: "/version")).map { String(buffer: $0.body) } == "1\n")
        #expect(router.respondNow(HealthRequest(method: "POST", uri: "/version"))?.status == 405)
        #expect(router.respondNow(HealthRequest(method: "GET", uri: "/")) == nil, "a rendered route is not answered at once")
    }
}
