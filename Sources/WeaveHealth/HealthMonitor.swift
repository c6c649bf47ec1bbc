public import Logging
import WeaveSupport

/// Runs health checks: the checks registered by name, plus those `discover` finds at each round
/// (with WeaveObservability, `HealthMonitor(container:)` finds every shared service of a container
/// whose instance conforms to `HealthCheckable`; a `.singleton` not yet made is made).
/// Checks run concurrently, at most `maxConcurrentChecks` at a time, each on its own clock; one that
/// hangs is timed out without delaying the others, and one that fails affects only itself. A check is
/// due again its interval, plus up to a tenth of it at random so that checks started together spread
/// out, after its run starts (after its end when the run took longer). Status changes are published
/// as an `AsyncSequence`.
public actor HealthMonitor {
    /// The checks found at each round, by name, beside the registered ones (which they override).
    private nonisolated let discover: @Sendable () async -> [(String, any HealthCheckable)]
    /// Fired when `discover` may find something new; nil when only each tick tells.
    private nonisolated let discoveryChanges: ChangeSignal?
    /// Settings for checks that have none of their own.
    public var defaultSettings: HealthCheckSettings
    /// How many checks run at once at most: thousands of checks must not start thousands of
    /// processes or connections at the same moment.
    public nonisolated let maxConcurrentChecks: Int
    /// The last published report and its index, readable without waiting for the actor (which may be
    /// busy with a large round): probes such as `/livez` read this.
    private nonisolated let published = Locked(HealthReport(checks: [:]).indexed)
    /// Fired when a published report's index differs from the one before (`latestIndexedReport`),
    /// which a watching `/health` waits on.
    public nonisolated let changes = ChangeSignal()
    /// Fired when `run` must look at its checks before its next tick: one registered, configured or
    /// finished.
    private nonisolated let wake = ChangeSignal()
    /// When `run` wakes next unless `wake` fires, and whether a due check waits for a slot.
    private var plannedWake = ContinuousClock.now
    private var waitingForSlot = false
    /// Transitions applied since the last publish, told to subscribers once the report shows them:
    /// whoever hears of one (the event log, and weave-healthd through it) reads a report that has it.
    private var unpublished: [HealthTransition] = []

    private var named: [String: any HealthCheckable] = [:]
    private var settings: [String: HealthCheckSettings] = [:]
    private var records: [String: HealthCheckRecord] = [:]
    private var due: [String: ContinuousClock.Instant] = [:]
    /// The checks `run` has started and that have not finished: one run of a check at a time.
    private var running: Set<String> = []
    /// Of those, the ones whose run timed out and has not returned yet; and runs that returned
    /// before their timed-out result was applied (`finish`, `returnedLate`).
    private var outliving: Set<String> = []
    private var lateBeforeFinish: Set<String> = []
    /// The first pass's checks without a result yet, until when they are awaited, and whom to tell.
    private var awaitingFirst: (pending: Set<String>, deadline: ContinuousClock.Instant, notify: @Sendable () -> Void)?
    private var subscribers: [Int: AsyncStream<HealthTransition>.Continuation] = [:]
    private var nextSubscriber = 0
    /// Where transitions are logged.
    private let logger: Logger
    /// When the scheduler last finished a round or woke for one (a watchdog reads it): it stops
    /// advancing when the scheduler is stuck.
    public private(set) var lastProgress = ContinuousClock.now

    /// `discover`: checks found anew at each round, such as a container's services; `discoveryChanges`,
    /// fired when it may find something new (`run` then looks within a second, not at its next tick).
    /// `logger` receives each transition.
    public init(defaultSettings: HealthCheckSettings = .init(), maxConcurrentChecks: Int = 64,
                logger: Logger = Logger(label: "weave.health"), discoveryChanges: ChangeSignal? = nil,
                discover: @escaping @Sendable () async -> [(String, any HealthCheckable)] = { [] }) {
        self.discover = discover
        self.discoveryChanges = discoveryChanges
        self.logger = logger
        self.defaultSettings = defaultSettings
        self.maxConcurrentChecks = max(maxConcurrentChecks, 1)
    }

    /// The statuses as of the last finished round, without waiting for the actor.
    public nonisolated var latestReport: HealthReport { published.withLock { $0.report } }

    /// `latestReport` and its `HealthReport.index`, computed once when it was published.
    public nonisolated var latestIndexedReport: (report: HealthReport, index: String) { published.withLock { $0 } }

    /// Adds (or replaces) a check under `name`.
    public func register(_ name: String, settings: HealthCheckSettings? = nil, check: any HealthCheckable) {
        named[name] = check
        if let settings { self.settings[name] = settings }
        wake.signal()
    }

    /// Adds (or replaces) a check given as a closure.
    public func register(_ name: String, settings: HealthCheckSettings? = nil,
                         check: @escaping @Sendable () async -> HealthStatus) {
        register(name, settings: settings, check: ClosureHealthCheck(body: check))
    }

    /// Removes a check registered by name, and forgets its record.
    public func unregister(_ name: String) {
        named[name] = nil
        settings[name] = nil
        records[name] = nil
        due[name] = nil
        publish()
    }

    /// Sets how the check `name` runs (a named check, or a container service by its name).
    public func configure(_ name: String, settings: HealthCheckSettings) {
        self.settings[name] = settings
        wake.signal()
    }

    /// The statuses as of the last round, without running anything.
    public var report: HealthReport {
        HealthReport(checks: records)
    }

    /// Runs every check once now and returns the report.
    public func checkAll() async -> HealthReport {
        await runChecks(await allChecks())
        return report
    }

    /// Runs the checks on their intervals until the task is cancelled. Each check is on its own
    /// clock: it starts when it is due and not still running, and its result is applied the moment
    /// it finishes, so a check that takes its whole timeout (or never returns) delays no other
    /// check's result or schedule. Between checks it sleeps until the next is due, or `tick` at most:
    /// discovered checks (a container's services made since) are looked for at every tick, and within
    /// a second of `discoveryChanges` firing; `lastProgress` moves at least once a tick; a
    /// registration wakes it at once.
    ///
    /// `firstResults` is called once: when every check of the first pass has a result, or after
    /// `firstResultsWithin`, whichever comes first (a server marks itself started then: one check
    /// stalled for its whole timeout does not hold the others' results back).
    public func run(tick: Duration = .seconds(1), firstResultsWithin wait: Duration = .seconds(5),
                    firstResults: (@Sendable () -> Void)? = nil) async {
        var firstPass = true
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let now = ContinuousClock.now
                lastProgress = now
                let discovered = discoveryChanges?.fired
                var sleep = tick
                do {
                    // In a scope of its own: what was found is not held (a weakly held service kept
                    // alive) while the loop sleeps.
                    var started: Set<String> = []
                    let checks = await allChecks()
                    forgetGone(keeping: checks)
                    // A run that outlived its timeout holds its check, not a slot: it may never return.
                    for (name, check) in checks where running.count - outliving.count < maxConcurrentChecks {
                        guard (due[name] ?? now) <= now, running.insert(name).inserted else { continue }
                        started.insert(name)
                        // Due again an interval after this start: known now, so that the loop plans
                        // its wake for it and its end wakes nothing (unless it overran; `finish`).
                        scheduleNext(name, after: now)
                        let timeout = settings(for: name).timeout
                        group.addTask {
                            let (status, duration, outlived) = await Self.runOne(check, timeout: timeout) {
                                await self.returnedLate(name)
                            }
                            await self.finish(name, status, duration: duration, outlived: outlived)
                        }
                    }
                    if firstPass, let firstResults {
                        awaitingFirst = (started.subtracting(records.keys), now + wait, firstResults)
                        firstPass = false
                    }
                    noteFirstResults()
                    // Until the next check is due (one still running past its due time wakes it when
                    // it finishes), or a slot frees for one due that the limit held back.
                    var soonest: ContinuousClock.Instant?
                    waitingForSlot = false
                    for (name, _) in checks {
                        let next = due[name] ?? now
                        if next > now { soonest = min(soonest ?? next, next) } else if !running.contains(name) { waitingForSlot = true }
                    }
                    sleep = min(tick, soonest.map { $0 - ContinuousClock.now } ?? tick)
                    if let awaitingFirst { sleep = min(sleep, awaitingFirst.deadline - ContinuousClock.now) }
                }
                let seen = wake.fired
                plannedWake = ContinuousClock.now + sleep
                let signals = [wake] + (discoveryChanges.map { [$0] } ?? [])
                _ = await ChangeSignal.wait(for: max(sleep, .milliseconds(1)), on: signals) { [wake, discoveryChanges] in
                    wake.fired != seen || discoveryChanges?.fired != discovered
                }
                if Task.isCancelled { break }
                // Found again at most once a `discoverySpacing`: a burst of registrations (a
                // startup's) is one look, not one each.
                let since = ContinuousClock.now - now
                if wake.fired == seen, discoveryChanges?.fired != discovered, since < Self.discoverySpacing {
                    let seenAgain = wake.fired
                    _ = await ChangeSignal.wait(for: Self.discoverySpacing - since, on: [wake]) { [wake] in wake.fired != seenAgain }
                }
            }
            group.cancelAll()
        }
        running.removeAll()
        (outliving, lateBeforeFinish) = ([], [])
        awaitingFirst = nil
    }

    /// Forgets the record of each check that is not among `checks` (a service released, evicted, or
    /// weakly held and gone): `/health` shows what is there, not the last status of what left.
    private func forgetGone(keeping checks: [(String, any HealthCheckable)]) {
        guard records.count + due.count > checks.count * 2 else { return }
        let present = Set(checks.map(\.0))
        let gone = Set(records.keys).union(due.keys).filter { !present.contains($0) && !running.contains($0) }
        guard !gone.isEmpty else { return }
        for name in gone {
            records[name] = nil
            due[name] = nil
        }
        publish()
    }

    /// The shortest time between two looks that `discoveryChanges` asks for.
    static let discoverySpacing = Duration.seconds(1)

    /// Calls the first pass's `firstResults` once all its checks have results, or its time is up.
    private func noteFirstResults() {
        guard let (pending, deadline, notify) = awaitingFirst, pending.isEmpty || ContinuousClock.now >= deadline else { return }
        awaitingFirst = nil
        notify()
    }

    /// Applies one check's result as soon as it has one, and sets when it is due again. A run that
    /// `outlived` its result (timed out, its check still running) keeps the check from starting again
    /// until it returns (`returnedLate`): one run of a check at a time, so a check that ignores
    /// cancellation does not pile up a new stuck run at each interval.
    private func finish(_ name: String, _ status: HealthStatus?, duration: Duration, outlived: Bool = false) {
        if outlived, lateBeforeFinish.remove(name) == nil { outliving.insert(name) } else { running.remove(name) }
        // A check cut short by cancellation (shutdown) has no result: its record stays as it was.
        guard let status else { return }
        awaitingFirst?.pending.remove(name)
        defer { noteFirstResults() }
        apply(status, to: name, duration: duration)
        // A run longer than its interval: due again an interval after its end, not at once.
        let now = ContinuousClock.now
        if due[name].map({ $0 <= now }) ?? true { scheduleNext(name, after: now) }
        // A slot is free, or it is due before `run` planned to wake: `run` may be sleeping past either.
        if waitingForSlot || due[name].map({ $0 < plannedWake }) == true { wake.signal() }
        lastProgress = ContinuousClock.now
        publish()
    }

    /// A run that outlived its result has returned: its check may start again when it is due.
    private func returnedLate(_ name: String) {
        guard outliving.remove(name) != nil else {
            lateBeforeFinish.insert(name) // its `finish` has not run yet
            return
        }
        running.remove(name)
        if waitingForSlot || due[name].map({ $0 < plannedWake }) ?? true { wake.signal() }
    }

    /// Due again after its interval plus up to a tenth of it at random, so checks that start together spread out.
    private func scheduleNext(_ name: String, after now: ContinuousClock.Instant) {
        let interval = settings(for: name).interval
        due[name] = now + interval + interval * Double.random(in: 0..<0.1)
    }

    /// Status changes from now on; each call returns a new subscription.
    public func transitions() -> AsyncStream<HealthTransition> {
        let (stream, continuation) = AsyncStream<HealthTransition>.makeStream(bufferingPolicy: .bufferingNewest(1_024))
        nextSubscriber += 1
        let id = nextSubscriber
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: Int) {
        subscribers[id] = nil
    }

    // MARK: Running

    private func allChecks() async -> [(String, any HealthCheckable)] {
        var checks = await discover()
        let discovered = Set(checks.map(\.0))
        checks += named.filter { !discovered.contains($0.key) }.map { ($0.key, $0.value) }
        return checks
    }

    private func settings(for name: String) -> HealthCheckSettings {
        settings[name] ?? defaultSettings
    }

    private func runChecks(_ checks: [(String, any HealthCheckable)]) async {
        let timed = checks.map { ($0.0, $0.1, settings(for: $0.0).timeout) }
        let limit = maxConcurrentChecks
        let results = await withTaskGroup(of: (String, HealthStatus?, Duration).self) { group in
            var results: [(String, HealthStatus?, Duration)] = []
            results.reserveCapacity(timed.count)
            for (index, (name, check, timeout)) in timed.enumerated() {
                if index >= limit, let finished = await group.next() { results.append(finished) }
                group.addTask {
                    let (status, duration, _) = await Self.runOne(check, timeout: timeout)
                    return (name, status, duration)
                }
            }
            for await finished in group { results.append(finished) }
            return results
        }
        let now = ContinuousClock.now
        // A check cut short by cancellation (shutdown) has no result: its record, and its state,
        // stay as they were, and no transition is logged.
        for case (let name, let status?, let duration) in results {
            apply(status, to: name, duration: duration)
            scheduleNext(name, after: now)
        }
        lastProgress = now
        publish()
    }

    private func publish() {
        let next = report.indexed
        let changed = published.withLock { published in
            defer { published = next }
            return published.index != next.index
        }
        if changed { changes.signal() }
        for transition in unpublished {
            for subscriber in subscribers.values { subscriber.yield(transition) }
        }
        unpublished.removeAll()
    }

    /// Runs `check`, giving up after `timeout` even if the check never returns or ignores cancellation.
    /// Cancelling the caller cancels the check (an exec check kills its process) and returns at once
    /// with no status (nil), so shutdown never waits for a check and is never a check's result.
    /// `outlived`: the check had not returned when this did; `returnedLate` is called when it does.
    static func runOne(_ check: any HealthCheckable, timeout: Duration, returnedLate: @escaping @Sendable () async -> Void = {})
        async -> (status: HealthStatus?, duration: Duration, outlived: Bool) {
        let clock = ContinuousClock()
        let start = clock.now
        // Which of the check and this function returned first: exactly one sees the other's mark.
        let returned = Locked<(check: Bool, caller: Bool)>((false, false))
        let running = Locked<(outcome: OneShot<HealthStatus?>?, work: Task<Void, Never>?, timer: OneShotTimer?)>((nil, nil, nil))
        let cancelled: HealthStatus? = nil // what a run cut short by cancellation returns: no status
        let status = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<HealthStatus?, Never>) in
                let outcome = OneShot(continuation)
                let work = Task {
                    // Timed from the run's start, not from when it was asked for: a run that waited
                    // for a thread behind others has not taken any of its time yet.
                    let timer = OneShotTimer(after: timeout) {
                        if outcome.resume(with: .unhealthy(error: HealthCheckError.timedOut(after: timeout))) {
                            running.withLock { $0.work }?.cancel()
                        }
                    }
                    running.withLock { $0.timer = timer }
                    let status = await check.healthCheck()
                    timer.cancel()
                    _ = outcome.resume(with: status)
                    if returned.withLock({ $0.check = true; return $0.caller }) { await returnedLate() }
                }
                running.withLock { $0.outcome = outcome; $0.work = work }
                if Task.isCancelled, outcome.resume(with: cancelled) {
                    work.cancel()
                    running.withLock { $0.timer }?.cancel()
                }
            }
        } onCancel: {
            let (outcome, work, timer) = running.withLock { $0 }
            if outcome?.resume(with: cancelled) == true {
                work?.cancel()
                timer?.cancel()
            }
        }
        let outlived = returned.withLock { $0.caller = true; return !$0.check }
        return (status, clock.now - start, outlived)
    }

    /// Applies flap damping and records the result; logs a change of state, told to subscribers
    /// once it is published.
    private func apply(_ result: HealthStatus, to name: String, duration: Duration) {
        let config = settings(for: name)
        let now = WallClock.now()
        let previous = records[name]
        var failures = previous?.consecutiveFailures ?? 0
        var successes = previous?.consecutiveSuccesses ?? 0
        switch result.state {
        case .unhealthy: failures += 1; successes = 0
        case .healthy: successes += 1; failures = 0
        case .degraded: failures = 0; successes = 0
        }
        let status: HealthStatus
        if let previous {
            switch (previous.status.state, result.state) {
            case (.unhealthy, .unhealthy), (.degraded, .degraded), (.healthy, .healthy):
                status = result // same state: keep the newest reason
            case (_, .unhealthy):
                status = failures >= config.failuresBeforeUnhealthy ? result : previous.status
            case (.healthy, .degraded):
                status = result
            case (_, .healthy):
                status = successes >= config.successesBeforeHealthy ? result : previous.status
            case (.unhealthy, .degraded):
                status = result
            }
        } else {
            status = result
        }
        let changed = previous?.status.state != status.state
        records[name] = HealthCheckRecord(
            name: name, status: status, lastResult: result,
            changedAt: changed ? now : previous?.changedAt ?? now, checkedAt: now, lastDuration: duration,
            consecutiveFailures: failures, consecutiveSuccesses: successes, groups: config.groups,
            lastSuccessAt: result.state == .unhealthy ? previous?.lastSuccessAt : now)
        guard changed else { return }
        unpublished.append(HealthTransition(name: name, from: previous?.status.state, to: status))
        let level: Logger.Level = switch status.state {
        case .healthy: previous == nil ? .debug : .info // a first healthy result is no news
        case .degraded: .warning
        case .unhealthy: .error
        }
        logger.log(level: level, "Health of \(name): \(previous?.status.state.rawValue ?? "unknown") → \(status.state.rawValue)",
                   metadata: WeaveEvent.healthTransition.metadata([
                       "check": "\(name)", "state_from": "\(previous?.status.state.rawValue ?? "unknown")",
                       "state_to": "\(status.state.rawValue)", "reason": "\(status.reason ?? "")",
                   ]))
    }
}

/// A check given as a closure.
struct ClosureHealthCheck: HealthCheckable {
    let body: @Sendable () async -> HealthStatus
    func healthCheck() async -> HealthStatus { await body() }
}

/// Resumes a continuation once, from whichever side gets there first.
final class OneShot<Value: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Locked(continuation)
    }

    /// Resumes with `value` if nobody did yet; returns whether this call did.
    @discardableResult
    func resume(with value: Value) -> Bool {
        guard let continuation = continuation.withLock({ current -> CheckedContinuation<Value, Never>? in
            defer { current = nil }
            return current
        }) else { return false }
        continuation.resume(returning: value)
        return true
    }
}
