import WeaveHealth
import WeavePrometheus
import WeaveSupport

// Scrapes: every application's `/metrics`, relabelled with `app`, within the budget.
extension AppFleet {
    /// One application's part of a scrape.
    struct Scrape: Sendable {
        let target: AppTarget
        /// Its families, relabelled with `app`; nil when it is down.
        let families: [MetricFamily]?
        let duration: Duration
    }

    /// Every application's `/metrics`, relabelled with `app` (`scrapeNow`). A scrape asked while
    /// another of the same kind is in progress shares it: two Prometheus servers scraping at once
    /// read the applications once, and hold one scrape's memory, not two.
    func scrape(native: Bool = false) async -> [Scrape] {
        let shared = scraping.withLock { scraping -> Task<[Scrape], Never> in
            if let running = scraping[native] { return running }
            let task = Task { [self] in
                let scrapes = await scrapeNow(native: native)
                self.scraping.withLock { $0[native] = nil }
                noteBurst(scrapes.count)
                return scrapes
            }
            scraping[native] = task
            return task
        }
        return await shared.value
    }

    /// What the daemon accepts from an application: OpenMetrics (which keeps units and counter
    /// names), and for a `native` scrape the protobuf exposition first, which carries native histograms.
    static func accept(native: Bool) -> String {
        let openMetrics = "application/openmetrics-text; version=1.0.0"
        return native ? ProtobufExposition.contentType + "; q=0.9, " + openMetrics + "; q=0.5" : openMetrics
    }

    /// Fetches every application's `/metrics` now, relabelled with `app`, each read in the format
    /// its `Content-Type` names. What is kept of them, relabelled (a protobuf answer counted at the
    /// size of its text rendering, as it is read), adds up to `maxScrapeBytes` at most: an answer
    /// that does not fit in what is left is down for this scrape, with the reason (and one longer
    /// than what is left is not read to its end).
    private func scrapeNow(native: Bool) async -> [Scrape] {
        let room = Locked(configuration.maxScrapeBytes)
        let scrapes = await ask("/metrics", accept: Self.accept(native: native), room: room) { [self] target, response, deadline throws(FetchFailure) in
            guard response.status == 200 else { throw FetchFailure("/metrics answered HTTP \(response.status)") }
            let limits = ParseLimits(labels: configuration.labelLimit, samples: configuration.sampleLimit, deadline: deadline)
            let take = { @Sendable (size: Int) -> Bool in
                room.withLock { left -> Bool in
                    guard left >= size else { return false }
                    left -= size
                    return true
                }
            }
            let protobuf = response.contentType.flatMap(ProtobufExposition.names)
            if protobuf == false {
                throw FetchFailure("/metrics answered Content-Type \((response.contentType ?? "").prefix(maxUTF8Bytes: 200).logSafe), "
                                   + "which is not a delimited io.prometheus.client.MetricFamily")
            }
            guard protobuf == true else {
                let families: [MetricFamily]
                do {
                    families = try ExpositionParser.parse(response.body, adding: [("app", target.name)], limits: limits)
                } catch {
                    throw FetchFailure("/metrics is not a valid exposition: \(error)")
                }
                let size = families.reduce(0) { $0 + $1.preformatted.count }
                guard take(size) else { throw overScrapeLimit("\(size) bytes relabelled") }
                return families
            }
            // Parsed, it holds far more than its compact bytes: the room is taken as it is read, at
            // the size of its text rendering, and given back if it is refused.
            var taken = 0
            do throws(ProtobufParser.Failure) {
                return try ProtobufParser.parse(response.body, adding: [("app", target.name)], limits: limits) { size in
                    guard take(size) else { return false }
                    taken += size
                    return true
                }
            } catch {
                let left = room.withLock { left in
                    left += taken
                    return left
                }
                if error.outOfRoom { throw overScrapeLimit("more than the \(left) bytes left, once parsed") }
                throw FetchFailure("/metrics is not a valid protobuf exposition: \(error)")
            }
        }.map { Scrape(target: $0.target, families: try? $0.outcome.get(), duration: $0.duration) }
        noteCheckStates(scrapes)
        return scrapes
    }

    /// Compares the checks' states a scrape shows (`weave_health_status{check,state} 1`) with the
    /// last `/health` read of each application: a transition `/metrics` shows first reaches
    /// `/health`, the status page and `systemctl status` at that application's next health read,
    /// which it brings forward, at most once per `health_interval`, unless it is watched (an application whose `/metrics`
    /// and `/health` always disagree, a liar or one cut at 1,000 checks, costs its own reads only).
    private func noteCheckStates(_ scrapes: [Scrape]) {
        let disagreeing = states.withLock { states in
            scrapes.compactMap { scrape -> String? in
                guard let families = scrape.families, let state = states[scrape.target.name], state.status != nil else { return nil }
                let read = Dictionary(state.components.map { ($0.name, $0.status.state.rawValue) }) { $1 }
                return Self.checkStates(families).contains { read[$0.key] != $0.value } ? scrape.target.name : nil
            }
        }
        // A watched application's transitions come with its events: it is not read early.
        let polled = disagreeing.isEmpty ? [] : disagreeing.filter { !watches.watched().contains($0) }
        guard !polled.isEmpty else { return }
        earlyHealthReads.ask(polled, now: ContinuousClock.now, interval: configuration.healthInterval)
    }

    /// The applications a scrape asked an early health read of since the last call.
    func takeHealthStale() -> Set<String> {
        earlyHealthReads.take()
    }

    /// The state of each check in an application's families, by check.
    static func checkStates(_ families: [MetricFamily]) -> [String: String] {
        guard let family = families.first(where: { $0.name == "weave_health_status" }) else { return [:] }
        var states: [String: String] = [:]
        for sample in family.preformatted.samples where sample.value == 1 {
            if let check = sample.labels["check"], let state = sample.labels["state"] { states[check] = state }
        }
        for sample in family.samples where sample.value == 1 {
            let labels = Dictionary(sample.labels) { $1 }
            if let check = labels["check"], let state = labels["state"] { states[check] = state }
        }
        return states
    }

    /// Why an answer (of `size`) was left out of a scrape whose `maxScrapeBytes` it does not fit in.
    func overScrapeLimit(_ size: String) -> FetchFailure {
        FetchFailure("its answer (\(size)) does not fit in what is left of apps: max_scrape_bytes "
                     + "(\(configuration.maxScrapeBytes)) in this scrape")
    }
}
