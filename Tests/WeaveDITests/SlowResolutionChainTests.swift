#if canImport(Glibc)
import Glibc
#endif
import Testing
import WeaveSupport
import WeaveTestSupport
@testable import WeaveDI
import Logging

private final class OrderDesk: Sendable {}
private final class ReportWriter: Sendable {}
private final class Ledger: Sendable {}
private struct Alone: Sendable {}
private struct Quick: Sendable {}
private struct Sleepy: Sendable {}
private final class AsyncDesk: Sendable {}
private final class AsyncWriter: Sendable {}
private final class AsyncLedger: Sendable {}

/// A slow resolution says why (#55): its chain of factory runs from the outermost resolve, each
/// run's total and self time, and the slowest by self time.
@Suite(.serialized) struct SlowResolutionChainTests {
    private func sleep(milliseconds: UInt32) { usleep(milliseconds * 1_000) }

    /// The slow resolutions `container` reports while `body` runs, once its instrumentation has delivered them.
    private func slowResolutions(of container: Container, _ body: () async throws -> Void) async throws -> [SlowResolution] {
        let chains = Locked<[SlowResolution]>([])
        let token = container.instrumentation.onSlowResolution { (resolution: SlowResolution) in chains.withLock { $0.append(resolution) } }
        defer { token.cancel() }
        try await body()
        await container.instrumentation.flush()
        return chains.withLock { $0 }
    }

    /// A known truth: factories that sleep 5, 10 and 20 ms, nested three deep. Every total and self
    /// time within 1 ms + 5 % of what the factories measured themselves, each slow run reported once
    /// with the whole chain, after the outermost ended; the two-argument hook still gets each.
    /// (Serialized, and measured up to three times: a thread that waits for a core between a
    /// factory's end and its parent's next line, while another test computes, has that wait in the
    /// parent's self time, which the factories' own clocks cannot see.)
    @Test(arguments: [Scope.transient, .singleton])
    func nestedFactoriesGiveTheirChainTotalsAndSelfTimes(scope: Scope) async throws {
        var deviations: [String] = []
        for _ in 0..<3 {
            deviations = try await measureNestedChain(scope: scope)
            if deviations.isEmpty { break }
        }
        #expect(deviations.isEmpty, "\(deviations)")
    }

    /// One measurement of the nest: what is structural is expected here; the times that are not
    /// within 1 ms + 5 % are returned.
    private func measureNestedChain(scope: Scope) async throws -> [String] {
        let container = Container(settings: InstrumentationSettings(slowResolutionThreshold: .milliseconds(4)))
        let truth = FactoryTimes()
        container.register(Ledger.self, scope: scope) { truth.measure("Ledger", sleeping: 20); return Ledger() }
        container.register(ReportWriter.self, scope: scope) {
            truth.measure("ReportWriter", sleeping: 10) { _ = container.resolve(Ledger.self) }
            return ReportWriter()
        }
        container.register(OrderDesk.self, scope: scope) {
            truth.measure("OrderDesk", sleeping: 5) { _ = container.resolve(ReportWriter.self) }
            return OrderDesk()
        }
        let chains = Locked<[SlowResolution]>([])
        let plain = Locked<[String]>([])
        let tokens = [container.instrumentation.onSlowResolution { (resolution: SlowResolution) in chains.withLock { $0.append(resolution) } },
                      container.instrumentation.onSlowResolution { service, _ in plain.withLock { $0.append(service) } }]
        defer { for token in tokens { token.cancel() } }
        _ = container.resolve(OrderDesk.self)
        await container.instrumentation.flush()
        let reported = chains.withLock { $0 }
        #expect(reported.map(\.service) == ["Ledger", "ReportWriter", "OrderDesk"], "in the order they ended")
        #expect(plain.withLock { $0 } == ["Ledger", "ReportWriter", "OrderDesk"])
        for (position, resolution) in zip([2, 1, 0], reported) {
            #expect(resolution.chain.map(\.service) == ["OrderDesk", "ReportWriter", "Ledger"])
            #expect(resolution.position == position && resolution.slowest == 2)
            #expect(resolution.chainText == "OrderDesk → ReportWriter → Ledger")
        }
        let chain = try #require(reported.last).chain
        var deviations: [String] = []
        for run in chain {
            deviations += truth.deviations(run.service, total: run.total.totalSeconds * 1_000, own: run.selfTime.totalSeconds * 1_000)
        }
        if scope == .singleton {
            // Made once: a second resolve runs no factory and reports nothing.
            _ = container.resolve(OrderDesk.self)
            await container.instrumentation.flush()
            #expect(chains.withLock { $0.count } == 3)
        }
        return deviations
    }

    /// Async factories nested three deep (5, 10 and 20 ms): each slow run is reported once the
    /// outermost async resolve ended, with the whole chain, and self times that are each run's total
    /// less the run it awaited, none shorter than the factories' own clocks say (within 1 ms + 5 %).
    @Test func asyncFactoriesGiveTheirChainToo() async throws {
        let container = Container(settings: InstrumentationSettings(slowResolutionThreshold: .milliseconds(4)))
        let truth = FactoryTimes()
        container.register(AsyncLedger.self) { () async throws -> AsyncLedger in
            try await truth.measureAsync("AsyncLedger", sleeping: 20)
            return AsyncLedger()
        }
        container.register(AsyncWriter.self) { () async throws -> AsyncWriter in
            try await truth.measureAsync("AsyncWriter", sleeping: 10) { _ = try await container.resolveAsync(AsyncLedger.self) }
            return AsyncWriter()
        }
        container.register(AsyncDesk.self) { () async throws -> AsyncDesk in
            try await truth.measureAsync("AsyncDesk", sleeping: 5) { _ = try await container.resolveAsync(AsyncWriter.self) }
            return AsyncDesk()
        }
        let reported = try await slowResolutions(of: container) { _ = try await container.resolveAsync(AsyncDesk.self) }
        #expect(reported.map(\.service) == ["AsyncLedger", "AsyncWriter", "AsyncDesk"], "in the order they ended")
        for (position, resolution) in zip([2, 1, 0], reported) {
            #expect(resolution.chain.map(\.service) == ["AsyncDesk", "AsyncWriter", "AsyncLedger"] && resolution.position == position)
        }
        let chain = try #require(reported.last).chain
        #expect(chain[0].selfTime == chain[0].total - chain[1].total && chain[1].selfTime == chain[1].total - chain[2].total)
        #expect(chain[2].selfTime == chain[2].total)
        let shortfalls = chain.flatMap {
            truth.shortfalls($0.service, total: $0.total.totalSeconds * 1_000, own: $0.selfTime.totalSeconds * 1_000)
        }
        #expect(shortfalls.isEmpty, "\(shortfalls)")
    }

    /// A synchronous factory resolved inside an async one joins its chain: an async factory of 5 ms
    /// that resolves a synchronous one of 20 ms gives one chain, AsyncDesk → Ledger, for both slow
    /// runs, and AsyncDesk's self time leaves Ledger's run out. Before, Ledger was its own chain and
    /// AsyncDesk's self time held Ledger's 20 ms.
    @Test func aSynchronousRunInsideAnAsyncOneJoinsItsChain() async throws {
        let container = Container(settings: InstrumentationSettings(slowResolutionThreshold: .milliseconds(4)))
        let truth = FactoryTimes()
        container.register(Ledger.self) { truth.measure("Ledger", sleeping: 20); return Ledger() }
        container.register(AsyncDesk.self) { () async throws -> AsyncDesk in
            try await truth.measureAsync("AsyncDesk", sleeping: 5) { _ = container.resolve(Ledger.self) }
            return AsyncDesk()
        }
        let reported = try await slowResolutions(of: container) { _ = try await container.resolveAsync(AsyncDesk.self) }
        #expect(reported.map(\.service) == ["Ledger", "AsyncDesk"], "in the order they ended")
        for (position, resolution) in zip([1, 0], reported) {
            #expect(resolution.chain.map(\.service) == ["AsyncDesk", "Ledger"] && resolution.position == position)
        }
        let chain = try #require(reported.last).chain
        #expect(chain.count == 2 && chain[0].selfTime == chain[0].total - chain[1].total)
        let shortfalls = chain.flatMap {
            truth.shortfalls($0.service, total: $0.total.totalSeconds * 1_000, own: $0.selfTime.totalSeconds * 1_000)
        }
        #expect(shortfalls.isEmpty, "\(shortfalls)")
    }

    /// What a chain's writer puts in an event's fields, its reader reads back (`ChainFields`, the one
    /// home of both): names and times of a short chain; a chain past `maxTimedRuns` keeps its names
    /// but not times it cannot pair; an application before 0.3 (no `chain`) is its dependency alone.
    @Test func aChainsFieldsAreWrittenAndReadByOneType() {
        let runs = [("OrderDesk", Duration.milliseconds(35), Duration.milliseconds(5)), ("Ledger", .milliseconds(30), .milliseconds(30))]
        let resolution = SlowResolution(service: "Ledger", duration: .milliseconds(30), threshold: .milliseconds(10),
                                        chain: runs.map { SlowResolution.Run(service: $0.0, total: $0.1, selfTime: $0.2) }, position: 1)
        let read = ChainFields(chain: resolution.chainText, times: resolution.chainTimesText, dependency: "Ledger")
        #expect(read.names == ["OrderDesk", "Ledger"] && read.isChain)
        #expect(read.times.map(\.total) == [35_000, 30_000] && read.times.map(\.own) == [5_000, 30_000])
        let long = (0..<40).map { "S\($0)" }
        let longRead = ChainFields(chain: ChainFields.chain(long), times: ChainFields.timesField(long.map { _ in (1, 1) }), dependency: "S39")
        #expect(longRead.names == long && longRead.times.isEmpty)
        let old = ChainFields(chain: nil, times: nil, dependency: "Ledger")
        #expect(old.names == ["Ledger"] && !old.isChain)
    }

    /// A slow run alone is its own chain; a slow run's chain goes down to the run with the most self
    /// time below it, and not into a quick one; quick runs report nothing. (A threshold of 100 ms:
    /// a quick run is slow only if its thread waits that long for a core.)
    @Test func aChainEndsAtTheSlowestRunBelow() async throws {
        let container = Container(settings: InstrumentationSettings(slowResolutionThreshold: .milliseconds(100)))
        container.register(Alone.self) { self.sleep(milliseconds: 110); return Alone() }
        container.register(Quick.self) { Quick() }
        container.register(Sleepy.self) {
            _ = container.resolve(Quick.self)
            self.sleep(milliseconds: 120)
            return Sleepy()
        }
        let chains = Locked<[SlowResolution]>([])
        let token = container.instrumentation.onSlowResolution { (resolution: SlowResolution) in chains.withLock { $0.append(resolution) } }
        defer { token.cancel() }
        _ = container.resolve(Alone.self)
        _ = container.resolve(Sleepy.self)
        await container.instrumentation.flush()
        let reported = chains.withLock { $0 }
        #expect(reported.map(\.chainText) == ["Alone", "Sleepy"])
        #expect(reported.allSatisfy { $0.chain.count == 1 && $0.selfTime <= $0.duration && $0.slowest == 0 })
    }

    /// Below the slow run, the chain follows the nested run with the largest total (#65): a 109 ms
    /// run of two 50 ms runs is where the time went, not a 60 ms leaf beside it, although that leaf
    /// has the most self time. A known tree, reported as a thread's trace reports it.
    @Test func theChainFollowsTheLargestTotals() async throws {
        let instrumentation = Instrumentation()
        let chains = Locked<[SlowResolution]>([])
        let token = instrumentation.onSlowResolution { (resolution: SlowResolution) in chains.withLock { $0.append(resolution) } }
        defer { token.cancel() }
        let report = ResolutionTrace.Report(instrumentation: instrumentation, throttle: LogThrottle(limit: .init(burst: 10, window: .seconds(1))),
                                            threshold: 10_000_000)
        let ms: UInt64 = 1_000_000
        // In the order they ended: Root(180: 11 own) holds A(109: 9 own; A1 50, A2 50) and B(60, all own).
        ResolutionTrace.report([("A1", 50 * ms, 50 * ms, 2, nil), ("A2", 50 * ms, 50 * ms, 2, nil), ("A", 109 * ms, 9 * ms, 4, nil),
                                ("B", 60 * ms, 60 * ms, 4, nil), ("Root", 180 * ms, 11 * ms, nil, report)])
        await instrumentation.flush()
        let root = try #require(chains.withLock { $0.first })
        #expect(root.chainText == "Root → A → A1")
        #expect(root.chain.map(\.total) == [.milliseconds(180), .milliseconds(109), .milliseconds(50)])
        #expect(root.chain[root.slowest].service == "A1", "the most self time of the runs in the chain")
    }

    /// The chain reaches the journal's fields, bounded: `WEAVE_CHAIN`, `WEAVE_SELF_USEC`, `WEAVE_SLOWEST`.
    @Test func theLogRecordCarriesTheChain() {
        let run = { (name: String, total: Int, own: Int) in
            SlowResolution.Run(service: name, total: .milliseconds(total), selfTime: .milliseconds(own))
        }
        let resolution = SlowResolution(service: "ReportWriter", duration: .milliseconds(30), threshold: .milliseconds(10),
                                        chain: [run("OrderDesk", 35, 5), run("ReportWriter", 30, 10), run("Ledger", 20, 20)],
                                        position: 1)
        let metadata = Instrumentation.metadata(resolution)
        #expect(metadata["chain"] == "OrderDesk → ReportWriter → Ledger")
        #expect(metadata["self_usec"] == "10000" && metadata["slowest"] == "Ledger" && metadata["duration_usec"] == "30000")
        #expect("\(Instrumentation.message(resolution))" == "Slow resolution of ReportWriter: 30 ms (threshold 10 ms); chain "
            + "OrderDesk 35 ms (self 5) → ReportWriter 30 ms (self 10) → Ledger 20 ms (self 20), slowest Ledger")
        let deep = SlowResolution(service: "x", duration: .seconds(1), threshold: .milliseconds(10),
                                  chain: (0..<1_000).map { run(String(repeating: "n", count: 100) + "\($0)", 1_000, 1) }, position: 0)
        #expect(deep.chainText.utf8.count <= SlowResolution.maxChainBytes && deep.chainText.hasSuffix("…"))
    }
}
