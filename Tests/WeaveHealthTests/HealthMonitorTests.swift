import Testing
import WeaveDI
@testable import WeaveHealth
import WeaveObservability
import WeaveSupport
import WeaveTestSupport

private struct Settings: Sendable { var name: String }
private struct Failure: Error { let code: Int }

/// Suspends forever without leaking its continuation (which the runtime would report), like a
/// health check stuck on a dead peer that also ignores cancellation.
private enum Hang {
    private static let parked = Locked<[CheckedContinuation<Void, Never>]>([])

    static func forever() async {
        await withCheckedContinuation { continuation in parked.withLock { $0.append(continuation) } }
    }
}

private final class Database: HealthCheckable {
    func healthCheck() async -> HealthStatus { .healthy }
}

private final class SlowDisk: HealthCheckable {
    func healthCheck() async -> HealthStatus { .degraded(reason: "3% free") }
}

private protocol Store: Sendable {}
private final class Ledger: Store, HealthCheckable {
    func healthCheck() async -> HealthStatus { .healthy }
}

/// Returns the statuses it is given, one per run, then repeats the last.
private final class Scripted: HealthCheckable {
    private let script: Locked<[HealthStatus]>
    init(_ script: [HealthStatus]) { self.script = Locked(script) }
    func healthCheck() async -> HealthStatus {
        script.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
    }
}

@Suite struct HealthMonitorTests {
    @Test func statesAreSpelledAsTheHealthJSONDraftDoes() {
        #expect(HealthState.allCases.map(\.ietfStatus) == ["pass", "warn", "fail"])
        #expect(HealthState.allCases.allSatisfy { HealthState(ietfStatus: $0.ietfStatus) == $0 })
        #expect(HealthState(ietfStatus: "healthy") == nil && HealthState(ietfStatus: "PASS") == nil)
    }

    @Test func checksContainerServicesAndNamedChecksAndAggregates() async {
        let container = Container()
        container.register(Database.self, scope: .singleton) { Database() }
        container.register("disk-root", SlowDisk.self, scope: .singleton) { SlowDisk() }
        container.register(Settings.self) { Settings(name: "not a check") }
        let monitor = HealthMonitor(container: container)
        await monitor.register("upstream") { .unhealthy(error: Failure(code: 7)) }
        await monitor.configure("Database", settings: HealthCheckSettings(groups: [HealthCheckSettings.live]))
        let report = await monitor.checkAll()
        #expect(Set(report.statuses.keys) == ["Database", "disk-root", "upstream"])
        #expect(report.statuses["Database"]?.state == .healthy)
        #expect(report.statuses["disk-root"]?.reason == "3% free")
        #expect(report.statuses["upstream"]?.state == .unhealthy)
        #expect(report.aggregate == .unhealthy)
        #expect(report.aggregate(group: HealthCheckSettings.live) == .healthy)
        #expect(report.aggregate(group: "nothing") == .healthy)
    }

    /// An async shared-scope service is checked from the first round on, made by the monitor if
    /// nothing resolved it before (it used to be skipped until something did).
    @Test func asyncSharedServicesAreCheckedBeforeAnyoneResolvesThem() async {
        let container = Container()
        container.register(Database.self, scope: .singleton) { () async throws -> Database in
            try await Task.sleep(for: .milliseconds(1))
            return Database()
        }
        container.register(SlowDisk.self, scope: .cached) { () async throws -> SlowDisk in SlowDisk() }
        let report = await HealthMonitor(container: container).checkAll()
        #expect(report.statuses["Database"]?.state == .healthy)
        #expect(report.statuses["SlowDisk"]?.reason == "3% free")
    }

    /// A health round is not a resolve: after a known number of resolves, rounds of checks leave
    /// the counts and both latency histograms exactly where the application's resolves put them,
    /// for sync, async and cached shared services alike.
    @Test func healthRoundsAddNothingToTheResolveCounts() async throws {
        let container = Container()
        container.register(Database.self, scope: .singleton) { Database() }
        container.register(SlowDisk.self, scope: .cached) { () async throws -> SlowDisk in SlowDisk() }
        for _ in 0..<7 { _ = container.resolve(Database.self) }
        for _ in 0..<3 { _ = try await container.resolveAsync(SlowDisk.self) }
        let before = container.statistics()
        let monitor = HealthMonitor(container: container)
        for _ in 0..<5 { _ = await monitor.checkAll() }
        #expect(await monitor.report.statuses["Database"]?.state == .healthy)
        let after = container.statistics()
        for (service, resolves) in [("Database", UInt64(7)), ("SlowDisk", 3)] {
            let (was, now) = try (#require(before[service]), #require(after[service]))
            #expect(now.resolutions == resolves)
            #expect(now.instancesCreated == 1)
            #expect(now.cachedHitLatency == was.cachedHitLatency)
            #expect(now.factoryLatency == was.factoryLatency)
        }
    }

    /// A shared service nothing resolved yet is made by the first round: its creation is counted,
    /// as the factory did run, but no resolve is.
    @Test func aServiceMadeForItsCheckCountsACreationAndNoResolve() async throws {
        let container = Container()
        container.register(Database.self, scope: .singleton) { Database() }
        let monitor = HealthMonitor(container: container)
        for _ in 0..<3 { _ = await monitor.checkAll() }
        let database = try #require(container.statistics()["Database"])
        #expect(database.resolutions == 0)
        #expect(database.instancesCreated == 1)
        #expect(database.factoryLatency.count == 1)
    }

    /// A monitor never makes what it does not check (#65): a plain singleton, and a checkable service
    /// registered under a protocol of its own, are not made by 3 rounds (their factories' side
    /// effects absent); the latter is checked from the round after the application made it.
    @Test func roundsMakeOnlyWhatIsHealthCheckableByRegistration() async throws {
        let made = Locked<[String]>([])
        let container = Container()
        container.register(Settings.self, scope: .singleton) { made.withLock { $0.append("Settings") }; return Settings(name: "report") }
        container.register((any Store).self, scope: .singleton) { made.withLock { $0.append("Store") }; return Ledger() }
        container.register(Database.self, scope: .singleton) { made.withLock { $0.append("Database") }; return Database() }
        container.register("cache", (any HealthCheckable).self, scope: .cached) { made.withLock { $0.append("cache") }; return SlowDisk() }
        let monitor = HealthMonitor(container: container)
        for _ in 0..<3 { _ = await monitor.checkAll() }
        #expect(made.withLock { $0.sorted() } == ["Database", "cache"])
        #expect(await Set(monitor.report.statuses.keys) == ["Database", "cache"])
        let settings = try #require(container.statistics()["Settings"])
        #expect(settings.instancesCreated == 0 && settings.factoryLatency.count == 0 && settings.slowResolutions == 0)
        _ = container.resolve((any Store).self)
        _ = await monitor.checkAll()
        #expect(await monitor.report.statuses["Store"]?.state == .healthy)
        #expect(made.withLock { $0.sorted() } == ["Database", "Store", "cache"])
    }

    /// Shutdown cancels a round; a check cut short by it has no result: no record, no transition
    /// (it used to be recorded, and logged, as unhealthy with a CancellationError at every stop).
    @Test func aRoundCancelledByShutdownRecordsNothing() async throws {
        let monitor = HealthMonitor(container: Container())
        await monitor.register("quick") { .healthy }
        _ = await monitor.checkAll()
        await monitor.register("slow") {
            try? await Task.sleep(for: .seconds(30))
            return .healthy
        }
        let transitions = await monitor.transitions()
        let round = Task { await monitor.checkAll() }
        try await Task.sleep(for: .milliseconds(100))
        round.cancel()
        let report = await round.value
        #expect(report.checks["slow"] == nil)
        #expect(report.statuses["quick"]?.state == .healthy)
        await monitor.unregister("slow")
        await monitor.register("after") { .degraded(reason: "a real result") }
        _ = await monitor.checkAll()
        var iterator = transitions.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.name == "after", "the first transition after the cancelled round is the next real one")
    }

    @Test func aHangingCheckTimesOutWithoutDelayingTheOthers() async {
        let monitor = HealthMonitor(container: Container(), defaultSettings: HealthCheckSettings(timeout: .milliseconds(100)))
        await monitor.register("hangs") {
            await Hang.forever()
            return .healthy
        }
        await monitor.register("quick") { .healthy }
        // The round returning at all is the point: the hung check never does. (No wall-clock bound
        // here; timings belong in Benchmarks/, which measures a 1,000-check round.)
        let report = await monitor.checkAll()
        guard case .unhealthy(let error) = report.statuses["hangs"] else { Issue.record("expected unhealthy"); return }
        #expect(error is HealthCheckError)
        #expect(report.statuses["quick"]?.state == .healthy)
    }

    /// Each check on its own clock: beside a check that never returns (and whose timeout is an
    /// hour), a check on a short interval runs again and again, and each of its results is applied
    /// when it finishes. Rounds that waited for every check of the round ran it once, then waited.
    @Test func aHungCheckHoldsNoOtherChecksResult() async throws {
        let monitor = HealthMonitor(container: Container())
        await monitor.register("hangs", settings: HealthCheckSettings(interval: .milliseconds(100), timeout: .seconds(3_600))) {
            await Hang.forever()
            return .healthy
        }
        let runs = Locked(0)
        await monitor.register("flips", settings: HealthCheckSettings(interval: .milliseconds(100), timeout: .seconds(5))) {
            let run = runs.withLock { count -> Int in
                count += 1
                return count
            }
            return run.isMultiple(of: 2) ? .unhealthy(error: Failure(code: run)) : .healthy
        }
        let running = Task { await monitor.run(tick: .milliseconds(20)) }
        // No bound on waiting: the old rounds waited an hour here, and a hang fails the test.
        await eventually { runs.withLock { $0 } >= 4 }
        let report = monitor.latestReport
        running.cancel()
        await running.value
        #expect(runs.withLock { $0 } >= 4, "the flipping check ran again while the other hung")
        #expect(report.checks["flips"] != nil)
        #expect(report.checks["hangs"] == nil, "the hung check never finished, and has no result")
    }

    @Test func flapDampingNeedsConsecutiveResults() async {
        let monitor = HealthMonitor(container: Container())
        let script = Scripted([.healthy, .unhealthy(error: Failure(code: 1)), .unhealthy(error: Failure(code: 2)),
                               .healthy, .unhealthy(error: Failure(code: 3)), .unhealthy(error: Failure(code: 4)),
                               .unhealthy(error: Failure(code: 5)), .healthy, .healthy])
        await monitor.register("flappy", settings: HealthCheckSettings(failuresBeforeUnhealthy: 3, successesBeforeHealthy: 2),
                               check: script)
        var states: [HealthState] = []
        for _ in 0..<9 { states.append(await monitor.checkAll().statuses["flappy"]!.state) }
        #expect(states == [.healthy, .healthy, .healthy, .healthy, .healthy, .healthy, .unhealthy, .unhealthy, .healthy])
        let record = await monitor.report.checks["flappy"]!
        #expect(record.consecutiveSuccesses == 2)
        #expect(record.consecutiveFailures == 0)
    }

    @Test func lastSuccessIsTheLastRunThatPassed() async {
        let monitor = HealthMonitor(container: Container())
        let script = Scripted([.unhealthy(error: Failure(code: 1)), .degraded(reason: "slow"), .unhealthy(error: Failure(code: 2)),
                               .healthy])
        await monitor.register("late", check: script)
        var successes: [Double?] = []
        for _ in 0..<4 {
            let record = await monitor.checkAll().checks["late"]!
            successes.append(record.lastSuccessAt)
            // A passing run stamps its own time; a failing one keeps the last pass.
            #expect(record.lastSuccessAt == (record.lastResult.state == .unhealthy ? successes.dropLast().last ?? nil : record.checkedAt))
        }
        #expect(successes[0] == nil)
        #expect(successes[1] != nil && successes[2] == successes[1])
        #expect(successes[3]! >= successes[1]!)
    }

    @Test func transitionsAreAStream() async {
        let monitor = HealthMonitor(container: Container())
        await monitor.register("svc", check: Scripted([.healthy, .degraded(reason: "slow"), .degraded(reason: "slower"), .healthy]))
        let stream = await monitor.transitions()
        for _ in 0..<4 { _ = await monitor.checkAll() }
        var seen: [String] = []
        for await transition in stream {
            seen.append("\(transition.from?.rawValue ?? "nil")->\(transition.to.state.rawValue)")
            if seen.count == 3 { break }
        }
        #expect(seen == ["nil->healthy", "healthy->degraded", "degraded->healthy"])
    }

    /// Whoever hears of a transition (the event log, and weave-healthd reading `/health` the moment
    /// it is told) reads a report that shows it: a transition is told after its report is published,
    /// and `changes` fires with that publish. Each state lasts three runs, so a report read at once
    /// still shows the state it was told of.
    @Test func aTransitionIsToldOnceTheReportShowsIt() async {
        let monitor = HealthMonitor(container: Container())
        let flips = 10
        let script = [HealthStatus.healthy] + (0..<flips).flatMap { _ in
            [HealthStatus](repeating: .degraded(reason: "slow"), count: 3) + [HealthStatus](repeating: .healthy, count: 3)
        }
        await monitor.register("svc", settings: HealthCheckSettings(interval: .milliseconds(5)), check: Scripted(script))
        let stream = await monitor.transitions()
        // Woken by the first publish. Its deadline is not a bound on the monitor: under ThreadSanitizer,
        // tests that block threads have held every task back for 41 s, and a wait's deadline is
        // punctual (a dispatch timer), so a 10 s one ended before the first run.
        let firstPublish = Task { await ChangeSignal.wait(for: .seconds(600), on: [monitor.changes]) { monitor.latestReport.checks["svc"] != nil } }
        let running = Task { await monitor.run(tick: .milliseconds(5)) }
        var told = 0, shown = 0
        for await transition in stream {
            if monitor.latestReport.checks["svc"]?.status.state == transition.to.state { shown += 1 }
            told += 1
            if told == 2 * flips + 1 { break }
        }
        running.cancel()
        #expect(await firstPublish.value)
        #expect(shown == told, "\(told - shown) of \(told) transitions were told before their report was published")
        #expect(told == 2 * flips + 1)
    }

    /// One run of a check at a time, even past its timeout: a check that never returns and ignores
    /// cancellation is timed out (unhealthy), and not started again while its run is stuck, so it
    /// does not pile up a stuck run at each interval; one that returns late runs again; and it holds
    /// no slot of the concurrency limit (the other check, limited to one at a time, keeps running).
    @Test func aRunThatOutlivesItsTimeoutIsNotStartedAgain() async throws {
        let monitor = HealthMonitor(maxConcurrentChecks: 1)
        let stuckRuns = Locked(0), lateRuns = Locked(0), quickRuns = Locked(0)
        let fast = HealthCheckSettings(interval: .milliseconds(20), timeout: .milliseconds(20))
        await monitor.register("stuck", settings: fast) {
            stuckRuns.withLock { $0 += 1 }
            await Hang.forever()
            return .healthy
        }
        await monitor.register("late", settings: fast) {
            lateRuns.withLock { $0 += 1 }
            try? await Task.sleep(for: .milliseconds(60)) // ignores cancellation's hurry: returns when it is done
            return .healthy
        }
        await monitor.register("quick", settings: HealthCheckSettings(interval: .milliseconds(20))) {
            quickRuns.withLock { $0 += 1 }
            return .healthy
        }
        let running = Task { await monitor.run(tick: .milliseconds(20)) }
        await eventually { lateRuns.withLock { $0 } >= 3 && quickRuns.withLock { $0 } >= 10 }
        running.cancel()
        #expect(stuckRuns.withLock { $0 } == 1, "a new stuck run at each interval")
        guard case .unhealthy(let error) = monitor.latestReport.checks["stuck"]?.status else {
            Issue.record("the stuck check is not timed out")
            return
        }
        #expect(error is HealthCheckError)
    }

    /// `changes` fires when the published report's index moves, not at every round: ten runs that
    /// change nothing wake no watcher, and the transition after them fires it once.
    @Test func changesFireWhenTheReportChangesOnly() async {
        let monitor = HealthMonitor()
        let script = [HealthStatus](repeating: .healthy, count: 10) + [.degraded(reason: "slow")]
        await monitor.register("svc", settings: HealthCheckSettings(interval: .milliseconds(5)), check: Scripted(script))
        let running = Task { await monitor.run(tick: .milliseconds(5)) }
        let degraded = await ChangeSignal.wait(for: .seconds(300), on: [monitor.changes]) {
            monitor.latestReport.checks["svc"]?.status.state == .degraded
        }
        running.cancel()
        #expect(degraded)
        #expect(monitor.changes.fired == 2, "the first result and the transition, not each of the \(script.count) runs")
        #expect(monitor.latestIndexedReport.index == monitor.latestReport.index)
    }

    /// A service the container makes after the monitor started is checked without waiting for the
    /// tick or another check's run (an hour each here): the container's change wakes the monitor.
    @Test func aServiceMadeLaterIsCheckedWithoutWaitingForTheTick() async {
        let container = Container()
        let monitor = HealthMonitor(container: container)
        await monitor.register("named", settings: HealthCheckSettings(interval: .seconds(3_600))) { .healthy }
        let running = Task { await monitor.run(tick: .seconds(3_600)) }
        #expect(await ChangeSignal.wait(for: .seconds(300), on: [monitor.changes]) { monitor.latestReport.checks["named"] != nil })
        container.register(Database.self, scope: .singleton) { Database() }
        let found = await ChangeSignal.wait(for: .seconds(300), on: [monitor.changes]) { monitor.latestReport.checks["Database"] != nil }
        running.cancel()
        #expect(found, "not found before the tick")
    }

    /// A service released from the container leaves the report at the monitor's next look (the
    /// release wakes it): `/health` does not keep the last status of what is gone.
    @Test func aReleasedServiceLeavesTheReport() async {
        let container = Container()
        container.register(Database.self, scope: .singleton) { Database() }
        let monitor = HealthMonitor(container: container)
        let running = Task { await monitor.run(tick: .seconds(3_600)) }
        #expect(await ChangeSignal.wait(for: .seconds(300), on: [monitor.changes]) { monitor.latestReport.checks["Database"] != nil })
        #expect(container.release(Database.self))
        let gone = await ChangeSignal.wait(for: .seconds(300), on: [monitor.changes]) { monitor.latestReport.checks["Database"] == nil }
        running.cancel()
        #expect(gone, "its last status kept")
    }

    /// A burst of container changes (a startup's registrations) is one look a second, not one each.
    @Test func aBurstOfChangesIsOneLookASecond() async throws {
        let changes = ChangeSignal()
        let looks = Locked(0)
        let monitor = HealthMonitor(discoveryChanges: changes) {
            looks.withLock { $0 += 1 }
            return []
        }
        let running = Task { await monitor.run(tick: .seconds(3_600)) }
        await eventually { looks.withLock { $0 } == 1 }
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<200 {
            changes.signal()
            try await Task.sleep(for: .milliseconds(5))
        }
        await eventually { looks.withLock { $0 } >= 2 }
        let elapsed = clock.now - start
        let seen = looks.withLock { $0 }
        running.cancel()
        // One at the first signal, then at most one per second of the burst, and one at its end.
        let bound = 3 + Int(elapsed.components.seconds)
        #expect(seen <= bound, "\(seen) looks in \(elapsed) for 200 signals")
    }

    /// `run` sleeps until the next check is due, not a tick at a time: with a tick of an hour, a check
    /// registered meanwhile runs at once, each check runs on its interval, and checks the concurrency
    /// limit held back run as slots free.
    @Test func runSleepsUntilSomethingIsDue() async {
        let monitor = HealthMonitor(maxConcurrentChecks: 2)
        let runs = Locked(0)
        for index in 0..<6 {
            await monitor.register("slow-\(index)", settings: HealthCheckSettings(interval: .seconds(3_600))) {
                try? await Task.sleep(for: .milliseconds(20))
                runs.withLock { $0 += 1 }
                return .healthy
            }
        }
        let running = Task { await monitor.run(tick: .seconds(3_600)) }
        func within(_ seconds: Int, _ condition: () -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
            return condition()
        }
        // Deadlines of minutes (ThreadSanitizer runs have held every task back for 41 s), against a tick of an hour.
        #expect(await within(300) { runs.withLock { $0 } == 6 }, "the limit held 4 back until an hour's tick")
        await monitor.register("late", settings: HealthCheckSettings(interval: .milliseconds(100))) { .degraded(reason: "late") }
        #expect(await within(300) { monitor.latestReport.checks["late"] != nil }, "a registration waits for the tick")
        let first = monitor.latestReport.checks["late"]?.checkedAt ?? 0
        #expect(await within(300) { (monitor.latestReport.checks["late"]?.checkedAt ?? 0) > first }, "its interval waits for the tick")
        running.cancel()
        await running.value
    }

    @Test func aRoundOfManyChecksWithSomeHangingFinishesNearTheTimeout() async {
        let monitor = HealthMonitor(container: Container(), defaultSettings: HealthCheckSettings(timeout: .milliseconds(200)))
        for index in 0..<200 {
            if index % 20 == 0 {
                await monitor.register("hang-\(index)") {
                    await Hang.forever()
                    return .healthy
                }
            } else {
                await monitor.register("ok-\(index)") { .healthy }
            }
        }
        let report = await monitor.checkAll()
        #expect(report.statuses.count == 200)
        #expect(report.statuses.values.filter { $0.state == .unhealthy }.count == 10)
    }
}
