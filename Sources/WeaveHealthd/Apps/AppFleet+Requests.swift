import Logging
import WeaveObservability
import WeaveSupport

// Requests: the health, dependencies and events rounds, and how every request to an application is
// made, ordered, bounded and noted.
extension AppFleet {
    /// Reads every application's `/health` now but those in `except` (watched: `AppWatches`), or
    /// only those named in `only`. Returns how many applications it asked.
    @discardableResult
    func refreshHealth(only: Set<String>? = nil, except: Set<String> = []) async -> Int {
        // 503 carries a body too: a failing application's components are the point.
        let room = Locked(Self.maxHealthKept)
        let answers = await ask("/health", accept: "application/health+json", maxBytes: Self.maxHealthBytes, only: only, except: except) { _, response, _ throws(FetchFailure) in
            let health = try AppHealth(response.body, status: response.status)
            let kept = health.keptBytes
            let fits = room.withLock { left -> Bool in
                guard left >= kept else { return false }
                left -= kept
                return true
            }
            guard fits else {
                throw FetchFailure("its /health (\(health.components.count) components, \(kept) bytes) does not fit in "
                                   + "what is left of the \(Self.maxHealthKept) bytes kept of all applications' health this round")
            }
            return health
        }
        let now = WallClock.now()
        states.withLock { states in
            for case (let target, .success(let health), _) in answers {
                states[target.name]?.status = health.status
                states[target.name]?.components = health.components
                states[target.name]?.checkedAt = now
            }
        }
        await findUnits()
        noteBurst(answers.count)
        return answers.count
    }

    /// Reads every application's `/dependencies` now (but those in `except`, or only those in
    /// `only`), for the status page. An application without the endpoint (an older
    /// WeaveAppEndpoint), or whose answer is not one, has no summary; it is not down for that: its
    /// `/health` and `/metrics` say whether it is.
    func refreshDependencies(only: Set<String>? = nil, except: Set<String> = []) async {
        let answers = await ask("/dependencies?limit=\(DependencySummary.defaultLimit)", accept: "application/json",
                                maxBytes: AppDependencies.maxBytes, notes: false, only: only, except: except) { _, response, _ throws(FetchFailure) in
            guard response.status == 200, let summary = DependencySummary(json: response.body) else {
                throw FetchFailure("/dependencies (HTTP \(response.status)) is not a dependency summary")
            }
            return summary
        }
        let now = WallClock.now()
        states.withLock { states in
            // A failed read keeps the last summary: the page shows a down application's last version.
            for case (let target, .success(let summary), _) in answers where states[target.name] != nil {
                states[target.name]!.dependencies = AppDependencies(summary, at: now, after: states[target.name]!.dependencies)
            }
        }
        noteBurst(answers.count)
    }

    /// Reads every application's new events (`/events` after the last one read), writes them to
    /// the journal (`AppEventJournal`) and then saves where it is in each. An application without the endpoint (an older
    /// WeaveAppEndpoint) has none; neither that nor a failed read says whether it is down.
    /// Those in `except` (watched: `AppWatches`) are left out. Returns how many applications it waited for.
    @discardableResult
    func refreshEvents(except: Set<String> = []) async -> Int {
        let (journal, owners) = (events, owners)
        let answers = await ask("/events", accept: "application/json", maxBytes: AppEventJournal.maxPageBytes, notes: false, except: except,
                      query: { "?after=\(journal.after($0.name))&limit=\(ContainerEventLog.maxPerRequest)" }) { target, response, _ throws(FetchFailure) in
            guard response.status == 200 else { return }
            try journal.ingest(target.name, response.body, owner: owners.owner(of: target.name))
        }
        await journal.persist(with: blocking)
        noteBurst(answers.count)
        return answers.count
    }

    /// A round (a scrape, a health, dependencies or events round) that asked `asked` applications
    /// ends: the megabytes it allocated go back once the daemon is quiet (`HeapTrimmer`). One that
    /// asked none allocated nothing worth trimming.
    func noteBurst(_ asked: Int) {
        if asked > 0 { trimmer?.burstEnded() }
    }

    /// Runs `body` for every target, at most `maxConcurrentRequests` at a time, in asking order for
    /// `path` (`AppAnswers.order`), each with how many targets not started yet may take their time,
    /// itself included (at least 1); results in target order.
    func each<Result: Sendable>(_ targets: [AppTarget], path: String,
                                        _ body: @escaping @Sendable (AppTarget, _ remaining: Int) async -> Result) async -> [Result] {
        let (order, costly) = answers.order(targets, path: path)
        return await withTaskGroup(of: (Int, Result).self) { group in
            var results: [(Int, Result)] = []
            for (started, index) in order.enumerated() {
                if started >= Self.maxConcurrentRequests, let finished = await group.next() { results.append(finished) }
                group.addTask { [target = targets[index], remaining = max(costly[started], 1)] in (index, await body(target, remaining)) }
            }
            for await finished in group { results.append(finished) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Asks every application for `path` at once (within `budget`), each answer read by `read` by
    /// the deadline of its request; records which answered (unless `notes` is false: an answer that
    /// does not say whether the application is up) and forgets those whose socket is gone. Outcomes
    /// in target order. With `room` (bytes the answers may still take), no answer is read past it.
    /// Only the targets in `only` (when given) and not in `except` are asked; `except` does not
    /// make it a round of some applications.
    ///
    /// Each request has `timeout`, or its share of what is left of the budget when there are more
    /// applications than requests at once (what is left over the waves of `maxConcurrentRequests`
    /// still to start, its own included), whichever is less: however many applications hang, and
    /// whatever their names, every one is asked within the budget, and the time quick ones leave
    /// goes to those after them.
    ///
    /// For a side endpoint (`notes` false: `/events`, `/dependencies`), the round does not wait for
    /// the applications that failed it when last asked: each is asked on its own (at most
    /// `maxConcurrentRequests` of them at once, one per application), and has no outcome in the
    /// round. Applications that hang `/events` cannot hold back another's events.
    func ask<Value: Sendable>(
        _ path: String, accept: String, room: Locked<Int>? = nil, maxBytes: Int? = nil, notes: Bool = true, only: Set<String>? = nil,
        except: Set<String> = [], query: (@Sendable (AppTarget) -> String)? = nil,
        read: @escaping @Sendable (AppTarget, HTTPFetch.Response, _ deadline: ContinuousClock.Instant) throws(FetchFailure) -> Value
    ) async -> [(target: AppTarget, outcome: Result<Value, FetchFailure>, duration: Duration)] {
        let deadline = ContinuousClock.now + configuration.budget
        let all = self.targets()
        let targets = (only.map { only in all.filter { only.contains($0.name) } } ?? all).filter { !except.contains($0.name) }
        let askOne = { @Sendable [self] (target: AppTarget, remaining: Int) async
            -> (target: AppTarget, outcome: Result<Value, FetchFailure>, duration: Duration) in
            let start = ContinuousClock.now
            let outcome: Result<Value, FetchFailure>
            var answered = false, refused = false
            var pid: Int32?
            let left = deadline - start
            let cap = min(maxBytes ?? configuration.maxResponseBytes, room?.withLock { $0 } ?? .max)
            do {
                guard left > .zero else { throw FetchFailure("the scrape budget of \(configuration.budget) was spent before it was asked") }
                if let vanished = vanished(target) { throw FetchFailure(vanished) }
                guard mayConnect(target) else {
                    let planted = if case .unix(let path) = target.address { Self.exists(path) } else { false }
                    throw FetchFailure(planted ? "it was stopped, and the socket now at its path is not its owner's" : Self.stoppedReason)
                }
                let waves = (remaining + Self.maxConcurrentRequests - 1) / Self.maxConcurrentRequests
                let timeout = min(configuration.timeout, left / max(waves, 1))
                let fetch = HTTPFetch(target: target.address, timeout: timeout,
                                      maxBodyBytes: cap, overflow: .fail, group: group, pool: connections)
                let response = try await fetch.get(target.pathPrefix + path + (query?(target) ?? ""), host: target.host,
                                                   headers: [("Accept", accept)])
                answered = true
                pid = response.peerPID
                outcome = Result { () throws(FetchFailure) in try read(target, response, start + timeout) }
            } catch let failure as FetchFailure where failure.tooLarge && room != nil && cap < configuration.maxResponseBytes {
                outcome = .failure(overScrapeLimit("more than \(cap) bytes"))
            } catch {
                refused = NetworkFailure.isRefused(error)
                outcome = .failure(FetchFailure(NetworkFailure.reason(error, target: target.address)))
            }
            // A request cut short by shutdown says nothing of the application: nothing is noted or logged.
            if notes, !Task.isCancelled {
                note(target, path: path, await withUnitState(outcome.map { _ in () }, of: target),
                     answered: answered, pid: pid)
            }
            if left > .zero, !Task.isCancelled {
                let last: AppAnswers.Last = if case .success = outcome { .answered } else if refused { .refused } else { .failed }
                answers.record(last, path: path, app: target.name)
            }
            return (target, outcome, ContinuousClock.now - start)
        }
        var awaited = targets
        if !notes {
            let failed = answers.unanswered(targets, path: path)
            awaited.removeAll { failed.contains($0.name) }
            for target in targets where failed.contains(target.name) { askApart(target, path: path) { await askOne($0, 1) } }
        }
        let outcomes = await each(awaited, path: path, askOne)
        // A round of some applications says nothing of the others.
        guard only == nil else { return outcomes }
        // What is gone is judged by the directory as it is now, not as it was when this round began:
        // an application that came meanwhile, and that another round found up, has not left (#70).
        let current = self.targets()
        let names = Set(current.map(\.name))
        answers.keep(names, path: path)
        await forgetAllBut(current.map(\.name))
        await lifecycle.persist(with: blocking)
        await owners.persist(with: blocking)
        connections.closeAll(except: Set(current.map(\.address)))
        return outcomes
    }

    /// Asks `target` for the side endpoint `path` with `askOne` in a task of its own, unless its last
    /// such request is still running or `maxConcurrentRequests` are.
    private func askApart<Value: Sendable>(_ target: AppTarget, path: String,
                                           _ askOne: @escaping @Sendable (AppTarget) async -> Value) {
        let key = path + "\u{0}" + target.name
        guard answers.startApart(key, limit: Self.maxConcurrentRequests) else { return }
        Task { [answers] in
            _ = await askOne(target)
            answers.endApart(key)
        }
    }

    /// Records whether `target` answered `path` (and which process served it), and logs when the
    /// application goes down or comes up: once per real change, whichever endpoint caused it.
    private func note(_ target: AppTarget, path: String, _ outcome: Result<Void, FetchFailure>, answered: Bool, pid: Int32?) {
        let failure: String? = if case .failure(let failure) = outcome { failure.description } else { nil }
        let (now, reason) = states.withLock { states -> (Bool?, String?) in
            var state = states[target.name] ?? AppState(target: target)
            state.target = target
            let wasUp = state.asked && state.failing.isEmpty
            state.asked = true
            state.askedAt = WallClock.now()
            state.answering = answered
            if let pid { state.pid = pid }
            state.failing[path] = failure
            if state.failing.isEmpty {
                (state.downSince, state.downPath) = (nil, nil)
            } else if state.downSince == nil || wasUp {
                (state.downSince, state.downPath) = (state.askedAt, path)
            }
            states[target.name] = state
            return (state.reachable, state.reason)
        }
        // Told once per change whatever the runtime: a reload's new fleet knows nothing yet, the
        // lifecycle does.
        if now == false, !isLeaving(target), lifecycle.announce(target.name, up: false) {
            logDown(target, reason: reason ?? "no answer")
        } else if now == true, lifecycle.announce(target.name, up: true),
                  events.admitLifecycle(target.name, .appUp, level: .notice, owner: owners.owner(of: target.name)) {
            logger.notice("Application \(target.name) is up at \(target.address)",
                          metadata: WeaveEvent.appUp.metadata(["app": "\(target.name)", "address": "\(target.address)"]))
        }
    }

    /// Logs that `target` went down, within the bounds of its events (`AppEventJournal.admit`).
    func logDown(_ target: AppTarget, reason: String) {
        guard events.admitLifecycle(target.name, .appDown, level: .warning, owner: owners.owner(of: target.name)) else { return }
        logger.warning("Application \(target.name) is down: \(reason)",
                       metadata: WeaveEvent.appDown.metadata(["app": "\(target.name)", "address": "\(target.address)", "reason": "\(reason)"]))
    }
}
