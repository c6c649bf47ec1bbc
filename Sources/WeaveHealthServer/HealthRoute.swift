import WeavePrometheus

/// One endpoint of a `HealthRouter`, declared once in `HealthRoute.all`: the router answers from
/// it, the framework adapters mount from it (`HealthRouter.mountedRoutes`), the server's reserved
/// connections and the listeners' roles read it, and a test checks docs/endpoints.md against it.
public struct HealthRoute: Sendable, Equatable {
    /// Which handler of the router answers.
    enum Handler: Sendable, Equatable {
        case page, metrics, health, livez, readyz, readyzOne, dependencies, events
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
    let roles: Set<ListenerRole>
    let handler: Handler

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

    private static let read = ["GET", "HEAD"]
    private static let html = "text/html; charset=utf-8"
    private static let plain = "text/plain; charset=utf-8"

    /// Every endpoint, in the order the documentation lists them.
    public static let all: [HealthRoute] = [
        HealthRoute(components: [], methods: read, formats: [html], isMounted: false, isProbe: false,
                    roles: [.all, .metrics, .health], handler: .page),
        HealthRoute(components: ["metrics"], methods: read,
                    formats: Exposition.Format.allCases.map(\.contentType),
                    isMounted: true, isProbe: false, roles: [.all, .metrics], handler: .metrics),
        HealthRoute(components: ["health"], methods: read, formats: ["application/health+json"], isMounted: true, isProbe: false,
                    roles: [.all, .health], handler: .health),
        HealthRoute(components: ["livez"], methods: read, formats: [plain], isMounted: true, isProbe: true,
                    roles: [.all, .health], handler: .livez),
        HealthRoute(components: ["readyz"], methods: read, formats: [plain], isMounted: true, isProbe: true,
                    roles: [.all, .health], handler: .readyz),
        HealthRoute(components: ["readyz", "**"], methods: read, formats: [plain], isMounted: true, isProbe: true,
                    roles: [.all, .health], handler: .readyzOne),
        HealthRoute(components: ["dependencies"], methods: read, formats: ["application/json"], isMounted: true, isProbe: false,
                    roles: [.all, .health], handler: .dependencies),
        HealthRoute(components: ["events"], methods: read, formats: ["application/json"], isMounted: true, isProbe: false,
                    roles: [.all, .health], handler: .events),
    ]

    /// The route `path` (a request's path, without its query) names, if any.
    public static func route(for path: String) -> HealthRoute? {
        guard path.hasPrefix("/") else { return nil }
        let components = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        let pathComponents = components == [""] ? [] : components
        return all.first { $0.matches(pathComponents) }
    }
}
