import WeaveObservability

// One watch request (`AppWatches`): an application's `/events`, held by the application until it
// has news or the wait ends, and what follows from the answer.
extension AppFleet {
    /// What one watch request came to.
    enum WatchAnswer: Equatable {
        /// Answered as a watch (`X-Weave-Index`): whether its `/health` was read, and whether the
        /// answer had news (events, or another run) rather than the wait's end or a shutdown's.
        case answered(healthRead: Bool, news: Bool)
        /// Answered, not as a watch (an older library, or `/events` refused or missing): poll it.
        case notWatchable
        /// No answer (refused, reset, timed out, too large): its rounds find whether it is down.
        case failed
    }

    /// Asks `target`'s `/events` after the last event written, held by the application for at most
    /// `wait`, on `connection` (the watch's own). When the answer has a health transition, or a new
    /// run, or `readHealth`, the application's `/health` and `/dependencies` are read first, so that
    /// a transition reaches `/health`, `/metrics`, the status page and the journal together; then the
    /// events are written to the journal.
    func watchEvents(_ target: AppTarget, wait: Duration, readHealth: Bool, connection: ConnectionPool) async -> WatchAnswer {
        guard vanished(target) == nil, mayConnect(target) else { return .failed }
        let name = target.name
        let query = "?\(events.watchQuery(name))&limit=\(ContainerEventLog.maxPerRequest)&wait=\(wait.components.seconds)s"
        let fetch = HTTPFetch(target: target.address, timeout: wait + configuration.timeout, maxBodyBytes: AppEventJournal.maxPageBytes,
                              overflow: .fail, group: group, pool: connection)
        let response: HTTPFetch.Response
        do {
            response = try await fetch.get(target.pathPrefix + "/events" + query, host: target.host, headers: [("Accept", "application/json")])
        } catch {
            return .failed
        }
        guard response.status == 200, response.weaveIndex != nil else { return .notWatchable }
        // A page that is not one is logged by the journal, once; the watch goes on.
        let page = try? events.page(name, response.body)
        let anotherRun = page.map { events.isAnotherRun(name, started: $0.started) } ?? false
        // Only what the journal has not written is news: a page replayed at every answer earns nothing.
        let written = anotherRun ? 0 : events.after(name)
        let fresh = page?.events.filter { $0.sequence > written } ?? []
        let transition = fresh.contains { $0.kind == .healthTransition }
        let healthRead = transition || anotherRun || readHealth
        if healthRead {
            await refreshHealth(only: [name])
            await refreshDependencies(only: [name])
        }
        if let page {
            events.ingest(name, page, owner: owners.owner(of: name))
            await events.persist(with: blocking)
        }
        return .answered(healthRead: healthRead, news: anotherRun || !fresh.isEmpty)
    }
}
