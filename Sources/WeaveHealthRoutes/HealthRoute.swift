import WeavePrometheus

/// One endpoint of a `HealthRouter`: its path, methods and formats, where it is served, and what
/// answers it. The router answers from its routes, the framework adapters mount from them
/// (`HealthRouter.mountedRoutes`: its rows but `/`), the server's reserved connections and the
/// listeners' roles read them, and a test checks docs/endpoints.md against them.
/// `HealthRoute.standard` are every router's; a program adds its own as rows
/// (`HealthRouter(routes:)`), as the container's `/dependencies` and `/events` and the daemon's
/// status page (`.page`) are.
public struct HealthRoute: Sendable {
    /// What answers a route, given the request and the router (its policy, source and identity).
    public enum Responder: Sendable {
        /// Made from snapshots, at once, where the request arrived (a server's event loop): the
        /// probes, which must answer whatever else is stuck. It must not wait or block.
        case immediate(@Sendable (HealthRequest, HealthRouter) -> HealthResponse)
        /// Rendered off the event loop, on Swift's pool.
        case rendered(@Sendable (HealthRequest, HealthRouter) async -> HealthResponse)
    }

    /// The path as path components; `**` matches one or more further components (`/readyz/<name>`).
    public let components: [String]
    /// The methods it answers; others get 405 with `Allow`.
    public let methods: [String]
    /// The content types it answers with.
    public let formats: [String]
    /// Whether the framework adapters mount it in an application's router (`/` is the application's own).
    public let isMounted: Bool
    /// Whether it is an orchestrator's probe: answered on the reserved connections of a crowded server,
    /// and by a listener whose role is `health`.
    public let isProbe: Bool
    /// The listener roles that serve it.
    public let roles: Set<ListenerRole>
    public let responder: Responder

    public init(components: [String], methods: [String] = HealthRoute.read, formats: [String], isMounted: Bool = true,
                isProbe: Bool = false, roles: Set<ListenerRole> = [.all, .health], responder: Responder) {
        self.components = components
        self.methods = methods
        self.formats = formats
        self.isMounted = isMounted
        self.isProbe = isProbe
        self.roles = roles
        self.responder = responder
    }

    /// `/readyz/<name>` style: `**` written as `<name>`.
    public var path: String {
        "/" + components.map { $0 == "**" ? "<name>" : $0 }.joined(separator: "/")
    }

    /// Whether `pathComponents` (of a request path, without the leading `/`) is this route.
    func matches(_ pathComponents: [Substring]) -> Bool {
        if components.last == "**" {
            return pathComponents.count >= components.count
                && zip(components.dropLast(), pathComponents).allSatisfy { $0 == $1 }
                && pathComponents.dropFirst(components.count - 1).allSatisfy { !$0.isEmpty }
        }
        return pathComponents.count == components.count && zip(components, pathComponents).allSatisfy { $0 == $1 }
    }

    /// An HTML page at `/`, served to every listener role and mounted in no application's router:
    /// the standard small page, or a program's own in its place.
    public static func page(_ render: @escaping @Sendable (HealthRequest, HealthRouter) async -> HealthResponse) -> HealthRoute {
        HealthRoute(components: [], formats: [html], isMounted: false, roles: [.all, .metrics, .health], responder: .rendered(render))
    }

    /// GET and HEAD: what every read-only endpoint answers.
    public static let read = ["GET", "HEAD"]
    /// The content type of HTML pages.
    public static let html = "text/html; charset=utf-8"
    private static let plain = "text/plain; charset=utf-8"

    /// Every router's endpoints, in the order the documentation lists them: `/` (a small page of the
    /// endpoints and the checks' states, which a route of the same path replaces), `/metrics`,
    /// `/health` and the probes.
    public static let standard: [HealthRoute] = [
        page { _, router in router.landingPage() },
        HealthRoute(components: ["metrics"], formats: Exposition.Format.allCases.map(\.contentType), roles: [.all, .metrics],
                    responder: .rendered { request, router in await router.metrics(request) }),
        HealthRoute(components: ["health"], formats: ["application/health+json"],
                    responder: .rendered { request, router in await router.health(request) }),
        HealthRoute(components: ["livez"], formats: [plain], isProbe: true,
                    responder: .immediate { request, router in router.livez(request) }),
        HealthRoute(components: ["readyz"], formats: [plain], isProbe: true,
                    responder: .immediate { request, router in router.readyz(request) }),
        HealthRoute(components: ["readyz", "**"], formats: [plain], isProbe: true,
                    responder: .immediate { request, router in router.readyzSingle(String(request.path.dropFirst("/readyz/".count))) }),
    ]
}
