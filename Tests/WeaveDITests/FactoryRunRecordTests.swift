#if canImport(Glibc)
import Glibc
#endif
import Testing
import WeaveSupport
import WeaveTestSupport
@testable import WeaveDI

private final class Desk: Sendable {}
private final class Writer: Sendable {}
private final class Ledger: Sendable {}
private final class AsyncDesk: Sendable {}
private final class AsyncLedger: Sendable {}

/// Every span's self time, by dependency: a `FactoryRunTracing` that keeps what it is told.
private final class SpanSpy: FactoryRunTracing {
    let selfTimes = Locked<[String: Duration]>([:])

    func started(dependency: String, scope: Scope, path: [String], parent: (any FactoryRunSpan)?) -> (any FactoryRunSpan)? {
        Span(dependency: dependency, spy: self)
    }

    struct Span: FactoryRunSpan {
        let dependency: String
        let spy: SpanSpy

        func ended(selfTime: Duration?, error: (any Error)?) {
            spy.selfTimes.withLock { $0[dependency] = selfTime }
        }

        func current<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
            try await body()
        }
    }
}

/// One record per factory run (#68): the span, the chain and the startup row of a run give the same
/// total and self time, to the nanosecond, for synchronous runs, async ones and a synchronous run
/// inside an async one. Before, an async run's span had no self time and its startup row computed
/// its own from the first runs it saw.
@Suite struct FactoryRunRecordTests {
    private func sleep(milliseconds: UInt32) { usleep(milliseconds * 1_000) }

    @Test func theSpanTheChainAndTheStartupRowOfARunAreOneRecord() async throws {
        let container = Container(settings: InstrumentationSettings(slowResolutionThreshold: .milliseconds(1)))
        let spy = SpanSpy()
        #expect(container.traceFactoryRuns(with: spy))
        container.register(Ledger.self) { sleep(milliseconds: 4); return Ledger() }
        container.register(Writer.self) { sleep(milliseconds: 3); _ = container.resolve(Ledger.self); return Writer() }
        container.register(Desk.self) { sleep(milliseconds: 2); _ = container.resolve(Writer.self); return Desk() }
        container.register(AsyncLedger.self) { () async throws -> AsyncLedger in
            sleep(milliseconds: 4)
            return AsyncLedger()
        }
        container.register(AsyncDesk.self) { () async throws -> AsyncDesk in
            sleep(milliseconds: 2)
            _ = try await container.resolveAsync(AsyncLedger.self)
            _ = container.resolve(Ledger.self) // a synchronous run inside an async one
            return AsyncDesk()
        }
        let chains = Locked<[SlowResolution]>([])
        let token = container.instrumentation.onSlowResolution { (resolution: SlowResolution) in chains.withLock { $0.append(resolution) } }
        defer { token.cancel() }
        _ = container.resolve(Desk.self)
        _ = try await container.resolveAsync(AsyncDesk.self)
        await container.instrumentation.flush()

        // Each outermost resolve's chain, by the report of its outermost run.
        let reported = chains.withLock { $0 }
        let outermost = reported.filter { $0.position == 0 }
        #expect(outermost.map(\.service) == ["Desk", "AsyncDesk"])
        var chainRuns: [String: SlowResolution.Run] = [:]
        for resolution in reported {
            for run in resolution.chain { chainRuns["\(resolution.chain[0].service)/\(run.service)"] = run }
        }
        let startup = Dictionary(container.startupTree.runs.map { ($0.service, $0) }) { first, _ in first }
        let spans = spy.selfTimes.withLock { $0 }
        // Ledger's first run is Writer's (startup keeps first runs); its second, inside AsyncDesk, has a span of its own.
        for (chain, service) in [("Desk", "Desk"), ("Desk", "Writer"), ("Desk", "Ledger"), ("AsyncDesk", "AsyncDesk"), ("AsyncDesk", "AsyncLedger")] {
            let run = try #require(chainRuns["\(chain)/\(service)"], "\(service) in \(chain)'s chain")
            let row = try #require(startup[service], "\(service) in the startup tree")
            #expect(row.total == run.total && row.selfTime == run.selfTime, "\(service): startup \(row.total) / \(row.selfTime), chain \(run.total) / \(run.selfTime)")
            if service != "Ledger" {
                #expect(spans[service] == run.selfTime, "\(service): span \(String(describing: spans[service])), chain \(run.selfTime)")
            }
        }
        // The async run's self time leaves out the run it awaited and the synchronous run it made.
        let asyncDesk = try #require(chainRuns["AsyncDesk/AsyncDesk"])
        let nested = try #require(chainRuns["AsyncDesk/AsyncLedger"]).total + (try #require(chainRuns["AsyncDesk/Ledger"])).total
        #expect(asyncDesk.selfTime == asyncDesk.total - nested)
        #expect(spans["AsyncDesk"] == asyncDesk.selfTime)
    }
}
