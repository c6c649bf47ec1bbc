import NIOCore
import Testing
import WeaveContainerRoutes
import WeaveHealth
@testable import WeaveHealthRoutes
import WeaveObservability
import WeavePrometheus
import WeaveSupport
import WeaveTestSupport

/// A source whose report a test changes, signalling `changes` after each change as a monitor does.
private final class ChangingSource: HealthSource {
    private let report = Locked(HealthReport(checks: [:]))
    let signal = ChangeSignal()
    var changes: ChangeSignal? { signal }

    func healthReport() -> HealthReport { report.withLock { $0 } }
    func observedValue(of check: String) -> (value: Double, unit: String)? { nil }

    func set(_ state: HealthStatus, changedAt: Double) {
        let record = HealthCheckRecord(name: "db", status: state, lastResult: state, changedAt: changedAt, checkedAt: changedAt,
                                       lastDuration: .zero, consecutiveFailures: 0, consecutiveSuccesses: 0, groups: [])
        report.withLock { $0 = HealthReport(checks: ["db": record]) }
        signal.signal()
    }
}

private struct PlainSource: HealthSource {
    func healthReport() -> HealthReport { HealthReport(checks: [:]) }
    func observedValue(of check: String) -> (value: Double, unit: String)? { nil }
}

private let identity = ServiceIdentity(serviceID: "orders", description: "", version: "1")

/// Watching requests (`?index=…&wait=…`, `?after=…&wait=…`): held until what they watch changes, the
/// wait ends or shutdown begins; answered at once otherwise, and refused when the wait is not one.
/// "At once" is within 50 s of a 60 s wait: the suite runs beside the others on two cores, under
/// ThreadSanitizer too, where tests that block threads have held every task back for 41 s.
@Suite struct WatchTests {
    private func router(_ source: any HealthSource, log: ContainerEventLog = ContainerEventLog(),
                        lifecycle: ServerLifecycle = ServerLifecycle()) -> HealthRouter {
        lifecycle.markStarted()
        return HealthRouter(policy: HealthPolicy(detailsPolicy: .always), identity: identity, collectors: [], source: source,
                            lifecycle: lifecycle, routes: [.events(log)])
    }

    private func index(_ response: HealthResponse) -> String? {
        response.headers.first { $0.0 == WatchWait.indexHeader }?.1
    }

    @Test func waitsAreDurationsOfAtMostAMinute() {
        #expect(WatchWait.parse("30s") == .seconds(30))
        #expect(WatchWait.parse("30") == .seconds(30))
        #expect(WatchWait.parse("500ms") == .milliseconds(500))
        #expect(WatchWait.parse("2m") == .seconds(120))
        #expect(WatchWait.parse("1h") == .seconds(3_600))
        for bad in ["", "s", "-1", "1.5s", "30x", "1e3", "9999999999", "٣s", " 3s", "3s "] {
            #expect(WatchWait.parse(bad) == nil, "\(bad)")
        }
        let router = router(PlainSource())
        guard case .success(let clamped) = WatchWait.of(HealthRequest(method: "GET", uri: "/health?wait=1h"), router: router) else {
            Issue.record("1h refused")
            return
        }
        #expect(clamped == WatchWait.longest)
    }

    @Test func aBadWaitIsRefusedWithWhatWasWrong() async {
        let router = router(ChangingSource())
        for path in ["/health?index=0&wait=soon", "/events?after=0&wait=%0A3s"] {
            let response = await router.handle(HealthRequest(method: "GET", uri: path))
            #expect(response.status == 400)
            let text = String(buffer: response.body)
            #expect(text.contains("is not a duration such as 30s") && !text.dropLast().contains("\n"), "\(text)")
        }
    }

    /// Held while the report's index is the one sent; answered the moment a transition changes it,
    /// with the new index; a report that only ran again (same state, reason and `changedAt`) keeps it.
    @Test func healthIsHeldUntilTheReportChanges() async throws {
        let source = ChangingSource()
        source.set(.healthy, changedAt: 1_800_000_000)
        let router = router(source)
        let first = await router.handle(HealthRequest(method: "GET", uri: "/health"))
        let seen = try #require(index(first))
        #expect(seen == source.healthReport().index)
        source.set(.healthy, changedAt: 1_800_000_000)
        let answered = Locked<HealthResponse?>(nil)
        let watch = Task {
            let response = await router.handle(HealthRequest(method: "GET", uri: "/health?index=\(seen)&wait=60s"))
            answered.withLock { $0 = response }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(answered.withLock { $0 } == nil, "answered though nothing changed")
        source.set(.healthy, changedAt: 1_800_000_000) // ran again, nothing new
        try await Task.sleep(for: .milliseconds(100))
        #expect(answered.withLock { $0 } == nil, "answered for a run that changed nothing")
        let changed = ContinuousClock.now
        source.set(.degraded(reason: "slow"), changedAt: 1_800_000_001)
        await watch.value
        #expect(ContinuousClock.now - changed < .seconds(50))
        let response = try #require(answered.withLock { $0 })
        #expect(String(buffer: response.body).contains("\"status\":\"warn\""))
        #expect(index(response) == source.healthReport().index && index(response) != seen)
    }

    @Test func healthIsAnsweredAtOnceWhenTheIndexDiffersOrNoneIsSent() async {
        let source = ChangingSource()
        source.set(.healthy, changedAt: 1)
        let router = router(source)
        let start = ContinuousClock.now
        _ = await router.handle(HealthRequest(method: "GET", uri: "/health?index=0000000000000000&wait=60s"))
        _ = await router.handle(HealthRequest(method: "GET", uri: "/health?wait=20s"))
        #expect(ContinuousClock.now - start < .seconds(50))
    }

    /// A source without changes (an older or a plain one) is answered at once and says nothing of an
    /// index, so that its clients poll it.
    @Test func aSourceWithoutChangesIsNotWatchable() async {
        let router = router(PlainSource())
        let start = ContinuousClock.now
        let response = await router.handle(HealthRequest(method: "GET", uri: "/health?index=x&wait=60s"))
        #expect(ContinuousClock.now - start < .seconds(50))
        #expect(index(response) == nil)
    }

    @Test func aWatchEndsWhenItsWaitDoes() async {
        let source = ChangingSource()
        source.set(.healthy, changedAt: 1)
        let router = router(source)
        let start = ContinuousClock.now
        let response = await router.handle(HealthRequest(method: "GET", uri: "/health?index=\(source.healthReport().index)&wait=300ms"))
        let took = ContinuousClock.now - start
        #expect(took >= .milliseconds(300) && took < .seconds(50), "\(took)")
        #expect(response.status == 200)
    }

    /// Graceful shutdown answers every watch at once, so a stopping application does not wait out a minute.
    @Test func shutdownAnswersTheWatches() async {
        let source = ChangingSource(), log = ContainerEventLog(), lifecycle = ServerLifecycle()
        source.set(.healthy, changedAt: 1)
        let router = router(source, log: log, lifecycle: lifecycle)
        let start = ContinuousClock.now
        async let health = router.handle(HealthRequest(method: "GET", uri: "/health?index=\(source.healthReport().index)&wait=60s"))
        async let events = router.handle(HealthRequest(method: "GET", uri: "/events?after=0&wait=60s"))
        try? await Task.sleep(for: .milliseconds(100))
        lifecycle.markStopping()
        let answers = await [health.status, events.status]
        #expect(ContinuousClock.now - start < .seconds(50))
        #expect(answers == [200, 200])
    }

    /// `/events?after=N&wait=…` is held while N is the newest event of the run `started` names; a new
    /// event, another run, or a number past the newest (a restarted application) answers it.
    @Test func eventsAreHeldUntilANewOne() async throws {
        let log = ContainerEventLog()
        let router = router(PlainSource(), log: log)
        log.append(.resolutionError, ["dependency": "A"])
        let answered = Locked<HealthResponse?>(nil)
        let watch = Task {
            let response = await router.handle(HealthRequest(method: "GET", uri: "/events?after=1&started=\(log.started)&wait=60s"))
            answered.withLock { $0 = response }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(answered.withLock { $0 } == nil)
        log.append(.resolutionError, ["dependency": "B"])
        await watch.value
        let response = try #require(answered.withLock { $0 })
        #expect(String(buffer: response.body).contains("\"seq\":2") && !String(buffer: response.body).contains("\"seq\":1,"))
        #expect(index(response) == "2")
        let start = ContinuousClock.now
        for path in ["/events?after=2&started=1.5&wait=60s", "/events?after=7&wait=60s", "/events?after=1&wait=60s"] {
            _ = await router.handle(HealthRequest(method: "GET", uri: path))
        }
        #expect(ContinuousClock.now - start < .seconds(50))
    }

    /// A signal fired between a waiter's check and its sleep is not lost: thousands of waits, each
    /// woken by a change made at a random moment, all return true at once.
    @Test func noSignalIsLost() async {
        let signal = ChangeSignal()
        let value = Locked(0)
        for round in 1...2_000 {
            async let waited = ChangeSignal.wait(for: .seconds(30), on: [signal]) { value.withLock { $0 } >= round }
            if round % 2 == 0 { await Task.yield() }
            value.withLock { $0 = round }
            signal.signal()
            #expect(await waited)
        }
        #expect(signal.waiting == 0)
    }

    /// A wait's deadline (and a check's timeout) fires once; cancelled, it never does.
    @Test func aTimerFiresOnceAndACancelledOneNever() async throws {
        let fired = Locked(0), cancelledFired = Locked(0)
        let timer = OneShotTimer(after: .milliseconds(10)) { fired.withLock { $0 += 1 } }
        let cancelled = OneShotTimer(after: .milliseconds(50)) { cancelledFired.withLock { $0 += 1 } }
        cancelled.cancel()
        await eventually { fired.withLock { $0 } == 1 }
        try await Task.sleep(for: .milliseconds(200))
        timer.cancel() // after it fired: nothing more happens
        #expect(fired.withLock { $0 } == 1)
        #expect(cancelledFired.withLock { $0 } == 0)
    }

    @Test func aCancelledWaitReturnsAtOnce() async {
        let signal = ChangeSignal()
        let start = ContinuousClock.now
        let task = Task { await ChangeSignal.wait(for: .seconds(600), on: [signal]) { false } }
        try? await Task.sleep(for: .milliseconds(50))
        task.cancel()
        #expect(await task.value == false)
        #expect(ContinuousClock.now - start < .seconds(50))
        #expect(signal.waiting == 0)
    }
}
