import Glibc
import NIOCore
import Testing
import WeaveAppEndpoint
import WeaveDI
import WeaveHealth
@testable import WeaveHealthRoutes
import WeaveObservability
import WeavePrometheus

private final class Fast: Sendable {}
private final class Slow: Sendable {}
private final class Unused: Sendable {}

/// A source with no checks (the routes tests share it).
struct NoChecks: HealthSource {
    func healthReport() -> HealthReport { HealthReport(checks: [:]) }
    func observedValue(of check: String) -> (value: Double, unit: String)? { nil }
}

@Suite struct DependencySummaryTests {
    private func container() -> Container {
        let container = Container()
        container.register(Fast.self) { Fast() }
        container.register(Slow.self) {
            usleep(50_000)
            return Slow()
        }
        container.register(Unused.self) { Unused() }
        for _ in 0..<4 { _ = container.resolve(Fast.self) }
        _ = container.resolve(Slow.self)
        return container
    }

    @Test func listsTheSlowestFirstWithinTheLimit() throws {
        let statistics = container().statistics()
        let summary = DependencySummary(version: "1.0", startedAt: 5, statistics: statistics, limit: 2)
        #expect(summary.dependencies.map(\.name) == ["Slow", "Fast"])
        #expect(summary.dependencies[1].resolutions == 4)
        let p99 = try #require(summary.dependencies[0].p99)
        #expect(p99 == statistics["Slow"]?.latency.quantile(0.99), "the container's own measurement")
        let all = DependencySummary(version: "1.0", startedAt: nil, statistics: container().statistics(), limit: 1_000)
        #expect(all.dependencies.map(\.name) == ["Slow", "Fast", "Unused"]) // untimed last
        #expect(all.dependencies[2].p50 == nil)
    }

    @Test func readsBackWhatItWrites() throws {
        let summary = DependencySummary(version: "2.\"1\"", startedAt: 1_795_669_741.64, statistics: container().statistics(), limit: 10)
        let read = try #require(DependencySummary(json: Array(summary.json.utf8)))
        #expect(read == summary)
    }

    /// The startup tree's longest runs travel with it (#55), their times to the nanosecond, and
    /// `?startup=N` bounds them.
    @Test func carriesTheStartupTree() throws {
        let container = container()
        container.endStartup()
        let tree = container.startupTree
        let summary = DependencySummary(version: "1", startedAt: nil, statistics: container.statistics(), limit: 10, startup: tree)
        let read = try #require(DependencySummary(json: Array(summary.json.utf8))?.startup)
        #expect(read.runs.map(\.service) == ["Fast", "Slow"] && read.runs.allSatisfy { $0.parent == nil })
        #expect(read.endedAt.map { abs($0 - tree.endedAt!) < 1e-6 } == true && read.omitted == 0)
        for (got, sent) in zip(read.runs, tree.runs) {
            #expect(abs((got.total - sent.total).totalSeconds) < 1e-9 && abs((got.selfTime - sent.selfTime).totalSeconds) < 1e-9)
        }
        let one = DependencySummary(version: "1", startedAt: nil, statistics: container.statistics(), limit: 10, startup: tree, startupRuns: 1)
        #expect(one.startup?.runs.map(\.service) == ["Slow"] && one.startup?.omitted == 1)
        let none = DependencySummary(version: "1", startedAt: nil, statistics: container.statistics(), limit: 10)
        #expect(!none.json.contains("startup") && DependencySummary(json: Array(none.json.utf8))?.startup == nil)
    }

    /// What another process sends as a startup tree is refused whole unless it is one.
    @Test func refusesWhatIsNotAStartupTree() {
        let head = "{\"version\":\"1\",\"dependencies\":[],\"startup\":"
        let run = "{\"name\":\"A\",\"parent\":null,\"start\":0,\"total\":0.002,\"self\":0.001}"
        #expect(DependencySummary(json: Array((head + "{\"endedAt\":null,\"omitted\":0,\"runs\":[\(run)]}}").utf8)) != nil)
        for startup in ["{\"omitted\":0,\"runs\":[]}", "{\"endedAt\":\"x\",\"omitted\":0,\"runs\":[]}",
                        "{\"endedAt\":-1,\"omitted\":0,\"runs\":[]}", "{\"endedAt\":1,\"omitted\":-1,\"runs\":[]}",
                        "{\"endedAt\":1,\"omitted\":0,\"runs\":{}}",
                        "{\"endedAt\":1,\"omitted\":0,\"runs\":[{\"name\":\"A\",\"parent\":null,\"start\":0,\"total\":0.001,\"self\":0.002}]}",
                        "{\"endedAt\":1,\"omitted\":0,\"runs\":[{\"name\":\"A\",\"parent\":1,\"start\":0,\"total\":0.002,\"self\":0.001}]}",
                        "{\"endedAt\":1,\"omitted\":0,\"runs\":[{\"name\":\"A\",\"start\":0,\"total\":0.002,\"self\":0.001}]}",
                        "{\"endedAt\":1,\"omitted\":0,\"runs\":[{\"name\":\"A\",\"parent\":null,\"start\":1e300,\"total\":0.002,\"self\":0.001}]}",
                        "{\"endedAt\":1,\"omitted\":0,\"runs\":[" + Array(repeating: run, count: 101).joined(separator: ",") + "]}"] {
            #expect(DependencySummary(json: Array((head + startup + "}").utf8)) == nil, "\(startup.prefix(120))")
        }
    }

    @Test func refusesWhatIsNotASummary() {
        for text in ["", "[]", "{\"dependencies\":[]}", "{\"version\":\"1\",\"dependencies\":{}}",
                     "{\"version\":\"1\",\"dependencies\":[{\"name\":\"A\",\"resolutions\":-1,\"slow\":0,\"errors\":0}]}",
                     "{\"version\":\"1\",\"dependencies\":[{\"name\":\"A\",\"resolutions\":1.5,\"slow\":0,\"errors\":0}]}",
                     "{\"version\":\"1\",\"dependencies\":[" + Array(repeating: "{\"name\":\"A\",\"resolutions\":1,\"slow\":0,\"errors\":0}",
                                                                    count: 101).joined(separator: ",") + "]}"] {
            #expect(DependencySummary(json: Array(text.utf8)) == nil, "\(text.prefix(80))")
        }
    }

    /// An application's figures are not trusted: an impossible latency is no figure.
    @Test func impossibleLatenciesAreNoFigures() throws {
        let text = "{\"version\":\"1\",\"dependencies\":[{\"name\":\"A\",\"resolutions\":1,\"slow\":0,\"errors\":0,"
            + "\"p50\":-1,\"p99\":1e300}]}"
        let summary = try #require(DependencySummary(json: Array(text.utf8)))
        #expect(summary.dependencies[0].p50 == nil && summary.dependencies[0].p99 == nil)
    }

    @Test func theRouterServesItOnlyWithStatistics() async {
        let container = container()
        let identity = ServiceIdentity(serviceID: "orders", description: "", version: "3.0")
        let without = HealthRouter(identity: identity, collectors: [],
                                   source: NoChecks(), lifecycle: ServerLifecycle())
        #expect(await without.handle(HealthRequest(method: "GET", uri: "/dependencies")).status == 404)
        let with = HealthRouter(identity: identity, collectors: [],
                                source: NoChecks(), lifecycle: ServerLifecycle(), routes: [.dependencies { container.statistics() }])
        let response = await with.handle(HealthRequest(method: "GET", uri: "/dependencies?limit=1"))
        #expect(response.status == 200)
        let summary = DependencySummary(json: Array(String(buffer: response.body).utf8))
        #expect(summary?.version == "3.0" && summary?.dependencies.map(\.name) == ["Slow"])
        #expect((summary?.startedAt ?? 0) > 1_700_000_000) // this process's start
        let metrics = await with.handle(HealthRequest(method: "GET", uri: "/dependencies"), role: .metrics)
        #expect(metrics.status == 404) // a metrics-only listener serves /metrics alone
    }
}
