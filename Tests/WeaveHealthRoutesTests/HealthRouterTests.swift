import NIOCore
import Testing
import WeaveDI
import WeaveHealth
@testable import WeaveHealthRoutes
import WeavePrometheus
import WeaveSupport
import WeaveTestSupport

private struct StaticSource: HealthSource {
    let report: HealthReport
    func healthReport() -> HealthReport { report }
    func observedValue(of check: String) -> (value: Double, unit: String)? { check == "disk" ? (12.5, "%") : nil }
}

private struct TestCounter: MetricCollector {
    func collect() async -> [MetricFamily] { [.counter("weave_test", "A test counter.", [([], 1)])] }
}

/// Waits (up to 5 s) for `Quick` to have been collected, as an aggregation waits for other processes.
private struct Waiting: MetricCollector {
    let quickCollected: Locked<Bool>
    var waitsOnOthers: Bool { true }
    func collect() async -> [MetricFamily] {
        await eventually { quickCollected.withLock { $0 } }
        return [.gauge("weave_waited", "Whether the other collectors ran meanwhile.", [([], quickCollected.withLock { $0 } ? 1 : 0)])]
    }
}

private struct Quick: MetricCollector {
    let collected: Locked<Bool>
    func collect() async -> [MetricFamily] {
        collected.withLock { $0 = true }
        return [.gauge("weave_waited", "Second help, left out.", [([("from", "quick")], 2)])]
    }
}

/// Counts its collections, each of which lasts until the test opens `gate` (once every request it
/// means to share the render has joined it: no clock decides who arrived in time).
private struct Slow: MetricCollector {
    let collections: Locked<Int>
    let gate: Locked<Bool>
    func collect() async -> [MetricFamily] {
        collections.withLock { $0 += 1 }
        await eventually { gate.withLock { $0 } }
        return [.gauge("weave_slow", "A slow collector.", [([], 1)])]
    }
}

private let identity = ServiceIdentity(serviceID: "orders", description: "the orders service", version: "1.2.3")

private struct Broken: Error, CustomStringConvertible { var description: String { "secret reason" } }

@Suite struct HealthRouterTests {
    private func router(_ statuses: [String: (HealthStatus, Set<String>)], policy: DetailsPolicy = .never, token: String? = nil,
                        started: Bool = true, stopping: Bool = false) -> HealthRouter {
        var records: [String: HealthCheckRecord] = [:]
        for (name, (status, groups)) in statuses {
            records[name] = HealthCheckRecord(name: name, status: status, lastResult: status, changedAt: 1_799_999_000, checkedAt: 1_800_000_000,
                                              lastDuration: .milliseconds(2), consecutiveFailures: 0, consecutiveSuccesses: 1,
                                              groups: groups)
        }
        let lifecycle = ServerLifecycle()
        if started { lifecycle.markStarted() }
        if stopping { lifecycle.markStopping() }
        return HealthRouter(
            policy: HealthPolicy(detailsPolicy: policy, bearerToken: token),
            identity: identity, collectors: [TestCounter(), ProcessMetrics(), BuildInfo(identity: identity)],
            source: StaticSource(report: HealthReport(checks: records)), lifecycle: lifecycle)
    }

    private func body(_ response: HealthResponse) -> String { String(buffer: response.body) }

    /// Requests that arrive while `/metrics` renders share the render, and with `metricsReuse` a
    /// render starts at most once per interval, later requests waiting for it: clients asking at
    /// once or in a loop cost one collection at a time, not one each (six clients in a loop slowed
    /// an application's requests).
    @Test func concurrentMetricsRequestsShareOneRender() async {
        let collections = Locked(0), gate = Locked(false)
        for reuse in [Duration.zero, .seconds(2)] {
            collections.withLock { $0 = 0 }
            gate.withLock { $0 = false }
            let router = HealthRouter(policy: HealthPolicy(metricsReuse: reuse), identity: identity,
                                      collectors: [Slow(collections: collections, gate: gate)],
                                      source: StaticSource(report: HealthReport(checks: [:])), lifecycle: ServerLifecycle())
            let bodies = await withTaskGroup(of: String.self) { group in
                for _ in 0..<10 { group.addTask { String(buffer: await router.handle(HealthRequest(method: "GET", uri: "/metrics")).body) } }
                await eventually { router.renderings.joined(.prometheusText) == 10 }
                gate.withLock { $0 = true }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(bodies).count == 1 && bodies[0].contains("weave_slow 1"))
            #expect(collections.withLock { $0 } == 1, "ten requests at once, one collection")
            // Five more at once, right after: without reuse one render; with it, they wait for the
            // interval to end and share the render that starts then. Either way one more.
            gate.withLock { $0 = false }
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<5 { group.addTask { _ = await router.handle(HealthRequest(method: "GET", uri: "/metrics")) } }
                await eventually { router.renderings.joined(.prometheusText) == 5 }
                gate.withLock { $0 = true }
            }
            #expect(collections.withLock { $0 } == 2, "five after: one more render")
            _ = await router.handle(HealthRequest(method: "GET", uri: "/metrics", headers: [("Accept", "application/openmetrics-text")]))
            #expect(collections.withLock { $0 } == 3, "another format is another render")
        }
    }

    @Test func aCollectorThatWaitsOnOthersRunsBesideTheRestAndKeepsItsPlace() async {
        let collected = Locked(false)
        let router = HealthRouter(identity: identity,
                                  collectors: [Waiting(quickCollected: collected), Quick(collected: collected)],
                                  source: StaticSource(report: HealthReport(checks: [:])), lifecycle: ServerLifecycle())
        let text = body(await router.handle(HealthRequest(method: "GET", uri: "/metrics")))
        // It saw the other collector run while it waited, and its family still comes first (its help, its sample first).
        #expect(text == """
            # HELP weave_waited Whether the other collectors ran meanwhile.
            # TYPE weave_waited gauge
            weave_waited 1
            weave_waited{from="quick"} 2

            """)
    }

    @Test func healthMapsStatesAndWithholdsReasonsByDefault() async {
        let router = router(["disk": (.degraded(reason: "3% free"), []), "db": (.unhealthy(error: Broken()), [])])
        let response = await router.handle(HealthRequest(method: "GET", uri: "/health"))
        #expect(response.status == 503)
        let text = body(response)
        #expect(text.contains("\"status\":\"fail\""))
        // The identity is the embedding service's, not the daemon's.
        #expect(text.contains("\"version\":\"1.2.3\",\"serviceId\":\"orders\",\"description\":\"the orders service\""))
        #expect(text.contains("\"disk:status\":[{\"componentId\":\"disk\",\"status\":\"warn\",\"time\":\"2027-01-15T08:00:00.000Z\",\"changedAt\":\"2027-01-15T07:43:20.000Z\",\"observedValue\":12.5,\"observedUnit\":\"%\"}]"))
        #expect(!text.contains("secret reason"))
        #expect(response.headers.contains { $0 == ("Content-Type", "application/health+json") })
        #expect(response.headers.contains { $0 == ("Cache-Control", "no-store") })
    }

    @Test func bearerTokenUnlocksDetails() async {
        let router = router(["db": (.unhealthy(error: Broken()), [])], policy: .whenAuthorized, token: "s3cret")
        let denied = await router.handle(HealthRequest(method: "GET", uri: "/health", headers: [("Authorization", "Bearer wrong")]))
        #expect(!body(denied).contains("secret reason"))
        let allowed = await router.handle(HealthRequest(method: "GET", uri: "/health", headers: [("authorization", "Bearer s3cret")]))
        #expect(body(allowed).contains("\"output\":\"secret reason\""))
    }

    @Test func warnIsStill200() async {
        let response = await router(["disk": (.degraded(reason: "low"), [])]).handle(HealthRequest(method: "GET", uri: "/health"))
        #expect(response.status == 200)
        #expect(body(response).hasPrefix("{\"status\":\"warn\""))
    }

    @Test func livenessIgnoresDownstreamChecks() async {
        let router = router(["upstream": (.unhealthy(error: Broken()), [HealthCheckSettings.ready])])
        let live = await router.handle(HealthRequest(method: "GET", uri: "/livez"))
        #expect(live.status == 200 && body(live) == "ok\n")
        let ready = await router.handle(HealthRequest(method: "GET", uri: "/readyz?verbose"))
        #expect(ready.status == 503)
        #expect(body(ready).contains("[-]upstream failed\n"))
        let excluded = await router.handle(HealthRequest(method: "GET", uri: "/readyz?exclude=upstream"))
        #expect(excluded.status == 200)
    }

    @Test func aDownApplicationIsNotTheServersReadiness() async {
        let router = router(["orders": (.unhealthy(error: Broken()), [HealthCheckSettings.application]),
                             "orders/Database": (.unhealthy(error: Broken()), [HealthCheckSettings.application]),
                             "disk": (.healthy, [])])
        let ready = await router.handle(HealthRequest(method: "GET", uri: "/readyz?verbose"))
        #expect(ready.status == 200 && !body(ready).contains("orders"))
        #expect(await router.handle(HealthRequest(method: "GET", uri: "/readyz/orders")).status == 503)
        let health = await router.handle(HealthRequest(method: "GET", uri: "/health"))
        #expect(health.status == 503)
    }

    @Test func readinessFailsFirstDuringShutdownAndBeforeStartup() async {
        let stopping = await router([:], stopping: true).handle(HealthRequest(method: "GET", uri: "/readyz?verbose"))
        #expect(stopping.status == 503 && body(stopping).contains("[-]shutdown failed"))
        let live = await router([:], stopping: true).handle(HealthRequest(method: "GET", uri: "/livez"))
        #expect(live.status == 200)
        let early = await router([:], started: false).handle(HealthRequest(method: "GET", uri: "/readyz"))
        #expect(early.status == 503 && body(early).contains("[-]startup failed"))
    }

    @Test func singleCheckUnknownPathsAndMethods() async {
        let router = router(["disk": (.healthy, [])])
        #expect(await router.handle(HealthRequest(method: "GET", uri: "/readyz/disk")).status == 200)
        #expect(await router.handle(HealthRequest(method: "GET", uri: "/readyz/nope")).status == 404)
        #expect(await router.handle(HealthRequest(method: "GET", uri: "/nope")).status == 404)
        let post = await router.handle(HealthRequest(method: "POST", uri: "/metrics"))
        #expect(post.status == 405)
        #expect(post.headers.contains { $0 == ("Allow", "GET, HEAD") })
        let head = await router.handle(HealthRequest(method: "HEAD", uri: "/livez"))
        #expect(head.body.readableBytes == 0 && head.headers.contains { $0 == ("Content-Length", "3") })
    }

    @Test func metricsNegotiateAndIncludeProcessAndBuildInfo() async {
        let router = router([:])
        let text = await router.handle(HealthRequest(method: "GET", uri: "/metrics"))
        #expect(text.headers.contains { $0 == ("Content-Type", "text/plain; version=0.0.4; charset=utf-8") })
        #expect(body(text).contains("weave_test_total 1\n") && body(text).contains("weave_build_info{version=\"1.2.3\""))
        #expect(body(text).contains("# HELP weave_build_info Which build answers") && !body(text).contains("weave-healthd"))
        let openMetrics = await router.handle(HealthRequest(method: "GET", uri: "/metrics",
                                                            headers: [("Accept", "application/openmetrics-text; version=1.0.0")]))
        #expect(body(openMetrics).hasSuffix("# EOF\n"))
    }

    @Test func landingPageEscapesNames() async {
        let page = await router(["<script>": (.healthy, [])]).handle(HealthRequest(method: "GET", uri: "/"))
        #expect(body(page).contains("&lt;script&gt;") && !body(page).contains("<td><script>"))
    }

    /// A grapheme cluster that begins with U+0600 swallows the `<` after it: escaping per
    /// `Character` let `<img … onerror=…>` through. Per scalar, nothing opens markup, and bidi and
    /// control characters are shown as their codes (a numeric reference would still be the character).
    @Test func escapingWorksOnScalarsAndNeutralisesInvisibleCharacters() {
        let hostile = "\u{0600}<img src=x onerror=alert(1)>\u{202E}\u{2066}\u{0007}\u{200B}\"'"
        let escaped = HTML.escape(hostile)
        #expect(!escaped.unicodeScalars.contains { "<>\"'".unicodeScalars.contains($0) })
        #expect(escaped == #"\u{600}&lt;img src=x onerror=alert(1)&gt;\u{202E}\u{2066}\u{7}\u{200B}&quot;&#39;"#)
        #expect(HTML.escape("plain ascii, é and 日本") == "plain ascii, é and 日本")
    }

    /// Every HTML answer forbids script and type sniffing; other answers do not carry the page headers.
    @Test func htmlAnswersCarryAStrictContentSecurityPolicy() async {
        let page = await router(["\u{0600}<script>": (.healthy, [])]).handle(HealthRequest(method: "GET", uri: "/"))
        let policy = page.headers.first { $0.0 == "Content-Security-Policy" }?.1 ?? ""
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'none'") && !policy.contains("unsafe-eval"))
        #expect(page.headers.contains { $0 == ("X-Content-Type-Options", "nosniff") })
        #expect(!body(page).contains("<script>"))
        let probe = await router([:]).handle(HealthRequest(method: "GET", uri: "/livez"))
        #expect(!probe.headers.contains { $0.0 == "Content-Security-Policy" })
    }

    /// The probes are answered without rendering (on the event loop, in the server); the rest are not.
    @Test func probesAreAnsweredNowAndRendersAreNot() {
        let router = router(["disk": (.healthy, [])])
        for path in ["/livez", "/readyz", "/readyz/disk", "/nowhere"] {
            #expect(router.respondNow(HealthRequest(method: "GET", uri: path)) != nil, "\(path)")
        }
        for path in ["/", "/metrics", "/health"] {
            #expect(router.respondNow(HealthRequest(method: "GET", uri: path)) == nil, "\(path)")
        }
    }

    @Test func requestParsing() {
        let request = HealthRequest(method: "GET", uri: "/readyz/a%20b?verbose&exclude=x,y&exclude=z")
        #expect(request.path == "/readyz/a b")
        #expect(request.has("verbose"))
        #expect(request.values("exclude") == ["x", "y", "z"])
        #expect(ConstantTime.equal(Array("abc".utf8), Array("abc".utf8)))
        #expect(!ConstantTime.equal(Array("abc".utf8), Array("abd".utf8)))
        #expect(!ConstantTime.equal(Array("abc".utf8), Array("abcd".utf8)))
        // Lengths that differ by 256 with zero bytes beyond: an 8-bit length comparison called these equal.
        #expect(!ConstantTime.equal([97], [97] + [UInt8](repeating: 0, count: 256)))
    }
}
