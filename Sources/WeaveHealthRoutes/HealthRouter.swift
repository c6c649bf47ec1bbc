import NIOCore
import WeaveHealth
public import WeavePrometheus
import WeaveSupport

/// Answers the endpoints of its routes: `HealthRoute.standard` and the rows it is given. Separate
/// from the server core, as a router in Hummingbird is, so any server can embed it.
public struct HealthRouter: Sendable {
    private let current: Locked<HealthPolicy>
    let renderings = SharedRendering<Exposition.Format, ByteBuffer>()
    private let healthRenderings = SharedRendering<HealthRendering, RenderedHealth>()
    /// Who answers: `/health`'s `serviceId`, `description` and `version`, and the landing page's title.
    public let identity: ServiceIdentity
    /// What `/metrics` shows: the union of these collectors' families.
    public let collectors: [any MetricCollector]
    public let source: any HealthSource
    public let lifecycle: ServerLifecycle
    /// What it answers, in the documentation's order.
    public let routes: [HealthRoute]

    /// `collectors` usually end with `ProcessMetrics()` and `BuildInfo(identity:)`. `routes` are
    /// added to `HealthRoute.standard`; one with the path of a standard route replaces it.
    public init(policy: HealthPolicy = HealthPolicy(), identity: ServiceIdentity, collectors: [any MetricCollector],
                source: any HealthSource, lifecycle: ServerLifecycle, routes: [HealthRoute] = []) {
        current = Locked(policy)
        self.identity = identity
        self.collectors = collectors
        self.source = source
        self.lifecycle = lifecycle
        var table = HealthRoute.standard
        for route in routes {
            if let index = table.firstIndex(where: { $0.components == route.components }) { table[index] = route } else { table.append(route) }
        }
        self.routes = table
    }

    /// The policy in force; `reconfigure` replaces it (a reload), every copy of the router sees it.
    public var policy: HealthPolicy { current.withLock { $0 } }

    /// Applies a new policy to the requests that arrive from now on.
    public func reconfigure(_ policy: HealthPolicy) {
        current.withLock { $0 = policy }
    }

    /// What a framework adapter mounts in an application's router, at each route's `components`
    /// (`**`: one or more further components) for its `methods`: every route but `/`, which is the
    /// application's.
    public var mountedRoutes: [HealthRoute] { routes.filter(\.isMounted) }

    /// Which routes a framework adapter mounts on an application's own port.
    public enum Mount: Sendable {
        /// `/health`, `/livez`, `/readyz` and `/readyz/<check>`: what load balancers and orchestrators
        /// probe (reasons shown as the policy says). The default: an application's port is often
        /// public, and the others give its dependencies' names, timings and errors to whoever asks.
        case probes
        /// Every mounted route, `/metrics`, `/dependencies` and `/events` too: for a port only trusted
        /// scrapers reach. The endpoint's own socket serves them all to weave-healthd either way.
        case all
    }

    /// The routes `mount` selects of `mountedRoutes`.
    public func mountedRoutes(_ mount: Mount) -> [HealthRoute] {
        switch mount {
        case .all: mountedRoutes
        case .probes: mountedRoutes.filter { $0.isProbe || $0.components == ["health"] }
        }
    }

    /// The route `path` (a request's path, without its query) names, if any.
    public func route(for path: String) -> HealthRoute? {
        guard path.hasPrefix("/") else { return nil }
        let components = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        let pathComponents = components == [""] ? [] : components
        return routes.first { $0.matches(pathComponents) }
    }

    /// Answers `request` from its routes; paths outside the listener's `role` are 404.
    public func handle(_ request: HealthRequest, role: ListenerRole = .all) async -> HealthResponse {
        switch resolve(request, role: role) {
        case .answered(let response): return response
        case .render(let respond): return finish(await respond(request, self), request)
        }
    }

    /// The answer to `request` when it takes no rendering: the `.immediate` routes (the probes),
    /// 404 and 405. They read snapshots only, so a server answers them where the request arrived
    /// (its event loop), never queued behind renders on Swift's pool; nil for the routes that
    /// render, which `handle` answers.
    public func respondNow(_ request: HealthRequest, role: ListenerRole = .all) -> HealthResponse? {
        if case .answered(let response) = resolve(request, role: role) { return response }
        return nil
    }

    private enum Resolution {
        case answered(HealthResponse)
        case render(@Sendable (HealthRequest, HealthRouter) async -> HealthResponse)
    }

    private func resolve(_ request: HealthRequest, role: ListenerRole) -> Resolution {
        guard let route = route(for: request.path), route.roles.contains(role) else {
            return .answered(finish(text(404, "not found: \(request.path)\n"), request))
        }
        guard route.methods.contains(request.method) else {
            var response = text(405, "method not allowed\n")
            response.headers.append(("Allow", route.methods.joined(separator: ", ")))
            return .answered(finish(response, request))
        }
        switch route.responder {
        case .immediate(let respond): return .answered(finish(respond(request, self), request))
        case .rendered(let respond): return .render(respond)
        }
    }

    /// What every answer gets: no caching, the inert-page headers on HTML, no body for HEAD.
    private func finish(_ response: HealthResponse, _ request: HealthRequest) -> HealthResponse {
        var response = response
        response.headers.append(("Cache-Control", "no-store"))
        if response.headers.contains(where: { $0.0 == "Content-Type" && $0.1.hasPrefix("text/html") }) {
            response.headers += HTML.headers
        }
        if request.method == "HEAD" {
            response.headers.append(("Content-Length", "\(response.body.readableBytes)"))
            response.body = ByteBuffer()
        }
        return response
    }

    /// A plain-text answer.
    public func text(_ status: Int, _ body: String) -> HealthResponse {
        HealthResponse(status: status, contentType: "text/plain; charset=utf-8", text: body)
    }

    // MARK: /metrics

    func metrics(_ request: HealthRequest) async -> HealthResponse {
        let format = Exposition.Format.negotiate(accept: request.header("Accept"))
        let body = await renderings.value(format, reuse: policy.metricsReuse) { [self] in await render(format) } ?? ByteBuffer()
        return HealthResponse(status: 200, headers: [("Content-Type", format.contentType)], body: body)
    }

    /// Every collector's families, rendered in `format`.
    private func render(_ format: Exposition.Format) async -> ByteBuffer {
        // Those that wait on other processes first, in child tasks, and the rest here meanwhile; in collector order.
        let families = await withTaskGroup(of: (Int, [MetricFamily]).self) { group in
            var parts = [[MetricFamily]](repeating: [], count: collectors.count)
            for (index, collector) in collectors.enumerated() where collector.waitsOnOthers {
                group.addTask { (index, await collector.collect(for: format)) }
            }
            for (index, collector) in collectors.enumerated() where !collector.waitsOnOthers { parts[index] = await collector.collect(for: format) }
            for await (index, families) in group { parts[index] = families }
            return parts.flatMap { $0 }
        }
        // Rendered straight into the buffer the server writes.
        var body = ByteBuffer()
        body.reserveCapacity(Exposition.estimatedSize(families))
        Exposition.render(families, format: format) { body.writeBytes($0) }
        return body
    }

    // MARK: /health

    /// Whether `request`'s client may see details (reasons, errors, events): the `details:` policy
    /// of its listener kind and the bearer token.
    public func showsDetails(_ request: HealthRequest) -> Bool {
        showsDetails(request, policy)
    }

    private func showsDetails(_ request: HealthRequest, _ policy: HealthPolicy) -> Bool {
        let details = request.viaUnixSocket ? policy.unixSocketDetailsPolicy ?? policy.detailsPolicy : policy.detailsPolicy
        switch details {
        case .always: return true
        case .never: return false
        case .whenAuthorized:
            guard let token = policy.bearerToken, let header = request.header("Authorization") else { return false }
            // RFC 9110: the scheme is case-insensitive, and one or more spaces separate it from the credentials.
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
            return ConstantTime.equal(Array(parts[1].drop(while: { $0 == " " }).utf8), Array(token.utf8))
        }
    }

    /// What a `/health` body depends on besides the report: requests that agree share a render
    /// (40 applications of 1,000 components make a body of 15 MB; five readers at once hold one).
    private struct HealthRendering: Hashable, Sendable {
        let details: Bool
        let started: Bool
    }

    /// `/health`; with `?index=I&wait=D` (I an `X-Weave-Index` it gave), held until the report's
    /// index differs from I, for at most D (`WatchWait`), or until graceful shutdown begins.
    func health(_ request: HealthRequest) async -> HealthResponse {
        let wait: Duration?
        switch WatchWait.of(request, router: self) {
        case .failure(let refusal): return refusal.response
        case .success(let asked): wait = asked
        }
        if let wait, let changes = source.changes, let index = request.values("index").last {
            _ = await ChangeSignal.wait(for: wait, on: [changes, lifecycle.stopSignal]) { [source, lifecycle] in
                source.indexedHealthReport().index != index || lifecycle.isStopping
            }
        }
        let policy = self.policy // one snapshot per request, whatever a reload does meanwhile
        let rendering = HealthRendering(details: showsDetails(request, policy), started: lifecycle.isStarted)
        // With no reuse interval a request never waits, so it always gets a render (nil is for a wait cancelled).
        let rendered = await healthRenderings.value(rendering, reuse: .zero) { [self] in renderHealth(rendering) }
            ?? renderHealth(rendering)
        let status = switch rendered.aggregate {
        case .healthy: policy.statusCodes.pass
        case .degraded: policy.statusCodes.warn
        case .unhealthy: policy.statusCodes.fail
        }
        var headers = [("Content-Type", "application/health+json")]
        if let index = rendered.index { headers.append((WatchWait.indexHeader, index)) }
        return HealthResponse(status: status, headers: headers, body: rendered.body)
    }

    private func renderHealth(_ rendering: HealthRendering) -> RenderedHealth {
        // The index only for a watchable source, read with the report it describes.
        let (report, index): (HealthReport, String?) = source.changes == nil
            ? (source.healthReport(), nil) : source.indexedHealthReport()
        let aggregate = rendering.started ? report.aggregate : .unhealthy
        let text = HealthJSON.write(
            report, aggregate: aggregate, version: identity.version, serviceID: identity.serviceID,
            description: identity.description, instance: identity.instance,
            output: !rendering.started && rendering.details ? "the first health round has not finished" : nil,
            details: rendering.details, observedValue: source.observedValue(of:))
        return RenderedHealth(body: ByteBuffer(string: text), aggregate: aggregate, index: index)
    }

    /// A `/health` body, with its aggregate (the status code) and the index of the report it shows
    /// (nil when its source cannot be watched).
    private struct RenderedHealth: Sendable {
        let body: ByteBuffer
        let aggregate: HealthState
        let index: String?
    }

    // MARK: /livez and /readyz

    private struct Probe {
        let name: String
        let ok: Bool
    }

    /// Liveness: the daemon itself (it answers, and its own checks in the `live` group), never downstream checks.
    func livez(_ request: HealthRequest) -> HealthResponse {
        let report = source.ownReport()
        var probes = [Probe(name: "ping", ok: true)]
        probes += report.checks.values.filter { $0.groups.contains(HealthCheckSettings.live) }
            .map { Probe(name: $0.name, ok: $0.status.state != .unhealthy) }
        return probeResponse("livez", probes, request)
    }

    /// Readiness: startup done, not shutting down, and every check in the `ready` group (every check
    /// outside `live` when no check names a group) not unhealthy. Aggregated applications are not the
    /// server's readiness: a daemon unready for a down application would stop being scraped (and its
    /// unit fail `ExecStartPost=`) just when it has news. `/readyz/<app>` answers for one.
    func readyz(_ request: HealthRequest) -> HealthResponse {
        var probes = [Probe(name: "startup", ok: lifecycle.isStarted), Probe(name: "shutdown", ok: !lifecycle.isStopping)]
        probes += readinessChecks(source.healthReport()).map { Probe(name: $0.name, ok: $0.status.state != .unhealthy) }
        return probeResponse("readyz", probes, request)
    }

    /// The server's own checks in `ready` (or outside `live` when none is in `ready`).
    private func readinessChecks(_ report: HealthReport) -> [HealthCheckRecord] {
        let own = report.checks.values.filter { !$0.groups.contains(HealthCheckSettings.application) }.sorted { $0.name < $1.name }
        if own.contains(where: { $0.groups.contains(HealthCheckSettings.ready) }) {
            return own.filter { $0.groups.contains(HealthCheckSettings.ready) }
        }
        return own.filter { !$0.groups.contains(HealthCheckSettings.live) }
    }

    /// `/readyz/<check>`, or `/readyz/<app>`: fails when the check (or the application, or any of its
    /// `<app>/…` components) is unhealthy.
    func readyzSingle(_ name: String) -> HealthResponse {
        let checks = source.healthReport().checks
        let records = (checks[name].map { [$0] } ?? []) + checks.values.filter { $0.name.hasPrefix(name + "/") }
        guard !records.isEmpty else { return text(404, "no check named \(name)\n") }
        let failed = records.filter { $0.status.state == .unhealthy }.map(\.name).sorted()
        return failed.isEmpty ? text(200, "ok\n") : text(503, failed.map { "[-]\($0) failed\n" }.joined())
    }

    private func probeResponse(_ endpoint: String, _ probes: [Probe], _ request: HealthRequest) -> HealthResponse {
        let excluded = Set(request.values("exclude"))
        let considered = probes.filter { !excluded.contains($0.name) }
        let ok = considered.allSatisfy(\.ok)
        guard request.has("verbose") || !ok else { return text(200, "ok\n") }
        var lines = considered.map { $0.ok ? "[+]\($0.name) ok" : "[-]\($0.name) failed" }
        lines += excluded.sorted().map { "[+]\($0) excluded: ok" }
        lines.append(ok ? "\(endpoint) check passed" : "\(endpoint) check failed")
        return text(ok ? 200 : 503, lines.joined(separator: "\n") + "\n")
    }

    // MARK: /

    func landingPage() -> HealthResponse {
        let report = source.healthReport()
        var rows = ""
        for name in report.checks.keys.sorted() {
            let state = report.checks[name]!.status.state.rawValue
            rows += "<tr><td>\(HTML.escape(name))</td><td class=\"\(state)\">\(state)</td></tr>\n"
        }
        var links = ""
        for route in mountedRoutes where !route.components.contains("**") {
            let href = route.path + (route.isProbe ? "?verbose" : "")
            links += "<li><a href=\"\(href)\">\(route.path)</a>: \(route.formats.joined(separator: ", "))</li>\n"
        }
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(HTML.escape(identity.serviceID))</title>
            <style>body{font-family:sans-serif;margin:2em}td{padding:.2em 1em}.healthy{color:#070}.degraded{color:#a60}.unhealthy{color:#b00}</style>
            </head><body>
            <h1>\(HTML.escape(identity.serviceID))</h1>
            <p>Overall: <strong class="\(report.aggregate.rawValue)">\(report.aggregate.rawValue)</strong> · version \(HTML.escape(identity.version))</p>
            <ul>
            \(links)</ul>
            <table><tr><th>check</th><th>state</th></tr>
            \(rows)</table>
            </body></html>

            """
        return HealthResponse(status: 200, contentType: HealthRoute.html, text: page)
    }
}
