import Logging
import WeaveDI
import WeaveMemoryPressure
import WeaveObservability
import WeaveSupport

/// Writes the applications' container events (their `/events`, read every health interval) to the
/// daemon's log, and so to journald: each with its kind's `MESSAGE_ID` and `WEAVE_APP=` beside
/// the event's own fields (`WEAVE_DEPENDENCY=`, `WEAVE_DURATION_USEC=`, `WEAVE_CHECK=`, …),
/// rate-limited per application and kind (`log_rate_limit`), with a summary of what was suppressed.
///
/// It resumes each application after the last number it saw, and says how many events it missed
/// when the application's log dropped them before they were read. The places are kept in the
/// daemon's state directory (`EventPositions`), so a restarted daemon goes on where the previous
/// one stopped. Without kept places (a first start, or no state directory), a log that began before
/// this daemon did is read from its end: what it already held was the previous daemon's to write.
/// Process-wide, so a reload keeps the places; bounded to `maxApps` applications.
final class AppEventJournal: Sendable {
    typealias Place = EventPositions.Place

    /// As many as names can be bound (`AppOwners.maxNames`): one user's applications, at their own
    /// bound, cannot fill it for another's (#64).
    static let maxApps = AppOwners.maxNames
    /// The largest answer read: 256 events of the largest fields, with room to spare.
    static let maxPageBytes = 1 << 20
    /// The places, and whether they changed since they were last saved.
    private let places = Locked<(byApp: [String: Place], changed: Bool)>(([:], false))
    private let throttle: LogThrottle
    /// The applications whose last `/events` answer was refused, each logged once.
    private let refusing = Locked<Set<String>>([])
    /// The bounds above each application's: all the applications of one socket owner, and all of
    /// the host's. A record or summary past one is counted in that bound's summary.
    private let ownerThrottle: LogThrottle
    private let hostThrottle: LogThrottle
    /// Whether the bounds follow `limit` (`bounds(for:)`), rather than being given.
    private let derivesBounds: Bool

    /// 12 and 24 times the application's burst, in its window: 60 and 120 records every 10 s with
    /// the default `log_rate_limit` (with their summaries, at most 726 a minute), so one process
    /// with many sockets cannot flood the journal, nor take all of the host's share; an operator
    /// who raises `log_rate_limit` to see every event raises them with it.
    static func bounds(for limit: LogRateLimit) -> (owner: LogRateLimit, host: LogRateLimit) {
        (LogRateLimit(burst: limit.burst.multipliedReportingOverflow(by: 12).overflow ? .max : limit.burst * 12, window: limit.window),
         LogRateLimit(burst: limit.burst.multipliedReportingOverflow(by: 24).overflow ? .max : limit.burst * 24, window: limit.window))
    }
    private let started: Double
    /// How far ahead of this host's clock an application's run may say it began (its clock may be
    /// another's: a container's, a VM's).
    static let maxClockSkew = 60.0
    /// Where the places are kept (`EventPositions`); nil keeps them in memory only.
    private let file: StateFile?
    /// Whether the places were read from `file`: then a log not among them was never read.
    private let restored: Bool
    private let logger: Logger
    /// The slow resolutions read, for `weave-health why`.
    let slowChains: AppSlowChains

    /// Reads the kept places from `file` (a blocking read: at startup).
    init(limit: LogRateLimit, started: Double = WallClock.now(), file: StateFile? = nil, slowChains: AppSlowChains = AppSlowChains(),
         bounds: (owner: LogRateLimit, host: LogRateLimit)? = nil, logger: Logger = Logger(label: "weave.healthd.apps")) {
        self.slowChains = slowChains
        throttle = LogThrottle(limit: limit)
        derivesBounds = bounds == nil
        let bounds = bounds ?? Self.bounds(for: limit)
        ownerThrottle = LogThrottle(limit: bounds.owner)
        hostThrottle = LogThrottle(limit: bounds.host)
        self.started = started
        self.file = file
        self.logger = logger
        let kept = file?.load(consequence: "logs older than this daemon are read from their end", EventPositions.parse)
        if let kept { places.withLock { $0.byApp = kept } }
        restored = kept != nil
    }

    /// The rate limit in force (a reload may change it), and the bounds above it with it.
    var limit: LogRateLimit {
        get { throttle.limit }
        set {
            throttle.limit = newValue
            guard derivesBounds else { return }
            (ownerThrottle.limit, hostThrottle.limit) = Self.bounds(for: newValue)
        }
    }

    /// The number to ask `app`'s `/events` for events after.
    func after(_ app: String) -> UInt64 {
        places.withLock { $0.byApp[app]?.last ?? 0 }
    }

    /// Whether a log that began at `started` is not the run of `app` whose events were written last.
    func isAnotherRun(_ app: String, started: Double) -> Bool {
        places.withLock { $0.byApp[app]?.started != started }
    }

    /// The query of a watching `/events` request to `app`: after the last event written, in the run
    /// that wrote it (another run is answered at once).
    func watchQuery(_ app: String) -> String {
        guard let place = places.withLock({ $0.byApp[app] }) else { return "after=0" }
        return "after=\(place.last)&started=\(place.started)"
    }

    /// Forgets `app` (it left): its next log is read from its start.
    func forget(_ app: String) {
        places.withLock { places in
            if places.byApp.removeValue(forKey: app) != nil { places.changed = true }
        }
        slowChains.forget(app)
    }

    /// Saves the places when they changed since the last save, on `blocking`'s threads; a failed
    /// save is tried again after the next round.
    func persist(with blocking: BlockingCalls) async {
        await file?.saveChanges(of: places, changed: \.changed, with: blocking) { EventPositions.render($0.byApp) }
        await slowChains.persist(with: blocking)
    }

    /// Reads one answer of `app`'s `/events` and logs what is new in it (`page`, then `ingest`).
    func ingest(_ app: String, _ body: [UInt8], owner: UInt32? = nil) throws(FetchFailure) {
        ingest(app, try page(app, body), owner: owner)
    }

    /// One answer of `app`'s `/events` as a page. A page that is not one is refused whole and
    /// logged, once until the application serves a valid page again.
    func page(_ app: String, _ body: [UInt8]) throws(FetchFailure) -> ContainerEventPage {
        let parsed = ContainerEventPage(body)
        // A run cannot begin in the future: its start, beyond a clock skew, would be taken as a new run's at every read.
        let fromTheFuture = parsed.map { $0.started > WallClock.now() + Self.maxClockSkew } ?? false
        guard let page = parsed, !fromTheFuture else {
            let failure = FetchFailure(fromTheFuture ? "/events says its run began \(Timestamp.rfc3339(parsed!.started)), in the future"
                                                     : "/events is not an event log's page")
            if refusing.withLock({ $0.count < Self.maxApps && $0.insert(app).inserted }) {
                logger.warning("Application \(app)'s \(failure); its events are not read until it serves one",
                               metadata: ["app": "\(app)"])
            }
            throw failure
        }
        refusing.withLock { _ = $0.remove(app) }
        return page
    }

    /// Logs what is new in `page`, an answer of `app`'s `/events`. What it logs is claimed (its place
    /// moved past it) before it is written, so two readers of one application at once (its watch, and
    /// a round that listed it before the watch began) write each event once.
    func ingest(_ app: String, _ page: ContainerEventPage, owner: UInt32? = nil) {
        let claim = places.withLock { places -> (resume: UInt64, last: UInt64, missed: UInt64, previousRun: Double?)? in
            let resume: UInt64, missed: UInt64, previousRun: Double?
            if let place = places.byApp[app], place.started == page.started {
                (resume, missed, previousRun) = (place.last, page.first > place.last + 1 ? page.first - place.last - 1 : 0, nil)
            } else {
                guard places.byApp[app] != nil || places.byApp.count < Self.maxApps else { return nil }
                // A log no daemon has read: from its start. Without kept places, one that began before
                // this daemon did is taken to have been read, and is read from its end.
                (resume, missed, previousRun) = (restored || page.started >= started ? 0 : page.next - 1, 0, places.byApp[app]?.started)
            }
            let last = max(resume, page.events.last?.sequence ?? 0)
            let place = Place(started: page.started, last: last)
            if places.byApp[app] != place {
                places.byApp[app] = place
                places.changed = true
            }
            return (resume, last, missed, previousRun)
        }
        guard let claim else { return }
        if let previousRun = claim.previousRun, admitLifecycle(app, WeaveEvent.appRestarted, level: .notice, owner: owner) {
            logger.notice("Application \(app) restarted: this run began at \(Timestamp.rfc3339(page.started)), the previous one at \(Timestamp.rfc3339(previousRun))",
                          metadata: WeaveEvent.appRestarted.metadata(["app": "\(app)", "started": "\(Timestamp.rfc3339(page.started))",
                                                                      "previous_started": "\(Timestamp.rfc3339(previousRun))"]))
        }
        if claim.missed > 0, admit(app, WeaveEvent.appEventsMissed, level: .warning, owner: owner) {
            logger.warning("Application \(app) dropped \(claim.missed) events from its log before weave-healthd read them",
                           metadata: WeaveEvent.appEventsMissed.metadata(["app": "\(app)", "missed": "\(claim.missed)"]))
        }
        for event in page.events where event.sequence > claim.resume && event.sequence <= claim.last {
            if event.kind == .slowResolution, let slow = AppSlowChains.Slow(time: event.time, fields: event.fields) {
                slowChains.note(app, slow)
            }
            write(app, event, owner: owner)
        }
    }

    private func write(_ app: String, _ event: ContainerEventLog.Event, owner: UInt32?) {
        let kind = event.kind
        guard admit(app, kind.event, level: kind.level(event), owner: owner) else { return }
        var metadata: Logger.Metadata = ["app": "\(app)", "event_seq": "\(event.sequence)", "event_time": "\(event.time)"]
        for (key, value) in event.fields { metadata[key] = "\(value)" }
        logger.log(level: kind.level(event), "\(kind.message(app, event.fields))", metadata: kind.event.metadata(metadata))
    }

    /// Whether one more record of `event` about `app` may be written: within the application's
    /// limit for that kind, then the bounds above it (`admitAbove`). The first suppressed record
    /// of a window schedules its summary, at `level`.
    private func admit(_ app: String, _ event: WeaveEvent, level: Logger.Level, owner: UInt32?) -> Bool {
        admit(app, event, level: level, owner: owner, bound: .events)
    }

    /// `admit` for the application's own entries (up, down, stopped, left, restarted): the same
    /// limits as its events, counted apart from them (#66), so a flood of one cannot silence the other.
    func admitLifecycle(_ app: String, _ event: WeaveEvent, level: Logger.Level, owner: UInt32?) -> Bool {
        admit(app, event, level: level, owner: owner, bound: .lifecycle)
    }

    /// What a bound above the applications counts: their events, or their lifecycle entries; the
    /// raw value names them in a summary's message.
    private enum Bound: String, Sendable {
        case events = "applications' events"
        case lifecycle = "applications' lifecycle entries"

        /// Its counters' keys in the owner and host throttles (literals: a key is made per record).
        var hostKey: String { self == .events ? "host" : "host lifecycle" }
        func ownerKey(_ owner: UInt32) -> String { self == .events ? "uid \(owner)" : "uid \(owner) lifecycle" }
        /// A summary's `suppressed_event` field.
        var summarised: String { self == .events ? "application events" : "application lifecycle entries" }
    }

    private func admit(_ app: String, _ event: WeaveEvent, level: Logger.Level, owner: UInt32?, bound: Bound) -> Bool {
        throttle.admit("\(app) \(event.messageID)", summary: { [self] suppressed, window in
            guard admitAbove(owner, bound) else { return }
            logger.log(level: level, "Suppressed \(suppressed) more \(event.title) records of application \(app) in the last \(window)",
                       metadata: WeaveEvent.suppressedRecords(suppressed, of: event, ["app": "\(app)"]))
        }) && admitAbove(owner, bound)
    }

    /// Whether one more record fits in the bounds of `owner`'s applications and of the host's;
    /// one that does not is counted in the summary of the bound it passed.
    private func admitAbove(_ owner: UInt32?, _ bound: Bound) -> Bool {
        let hostSummary = { @Sendable [self] (suppressed: Int, window: Duration) in
            logger.warning("Suppressed \(suppressed) more records of \(bound.rawValue) in the last \(window), past the host's bound",
                           metadata: Self.boundSummary(suppressed, bound, [:]))
        }
        let host = bound.hostKey
        if let owner, !ownerThrottle.admit(bound.ownerKey(owner), summary: { [self] suppressed, window in
            guard hostThrottle.admit(host, summary: hostSummary) else { return }
            logger.warning("Suppressed \(suppressed) more records of the \(bound.rawValue) of uid \(owner) in the last \(window)",
                           metadata: Self.boundSummary(suppressed, bound, ["uid": "\(owner)"]))
        }) { return false }
        return hostThrottle.admit(host, summary: hostSummary)
    }

    /// The fields of a bound's summary, which stands for records of every kind it counts.
    private static func boundSummary(_ suppressed: Int, _ bound: Bound, _ fields: Logger.Metadata) -> Logger.Metadata {
        WeaveEvent.recordsSuppressed.metadata(fields.merging(["suppressed": "\(suppressed)", "suppressed_event": "\(bound.summarised)"]) { $1 })
    }

    // MARK: The page

    /// One event as read: only the fields its kind has, each made `logSafe` and cut to `ContainerEventLog.maxFieldBytes`.
}

/// How the daemon writes each kind of an application's event.
extension ContainerEventLog.Event.Kind {
    var event: WeaveEvent {
        switch self {
        case .slowResolution: .slowResolution
        case .resolutionError: .resolutionError
        case .memoryPressure: .memoryPressure
        case .healthTransition: .healthTransition
        case .startup: .startupResolutions
        }
    }

    /// As the application's own container and monitor log them.
    func level(_ event: ContainerEventLog.Event) -> Logger.Level {
        switch self {
        case .slowResolution: .warning
        case .resolutionError: .error
        case .memoryPressure, .startup: .notice
        case .healthTransition:
            switch event.fields["state_to"] {
            case "unhealthy": .error
            case "degraded": .warning
            default: .info
            }
        }
    }

    func message(_ app: String, _ fields: [String: String]) -> String {
        let field = { (name: String) in fields[name] ?? "?" }
        switch self {
        case .slowResolution:
            let duration = Double(field("duration_usec")).map { "\($0 / 1_000) ms" } ?? "?"
            let threshold = Double(field("threshold_usec")).map { "\($0 / 1_000) ms" } ?? "?"
            // Its chain when it has one (an application before 0.3 sends none, a lone run its own name).
            let chain = ChainFields(chain: fields["chain"], times: nil, dependency: "").isChain
                ? "; chain \(field("chain")), slowest \(field("slowest"))" : ""
            return "Application \(app): slow resolution of \(field("dependency")): \(duration) (threshold \(threshold))\(chain)"
        case .resolutionError:
            return "Application \(app): resolving \(field("dependency")) failed (\(field("error_kind"))): \(field("error"))"
        case .memoryPressure:
            return "Application \(app) dropped its cached instances under memory pressure"
        case .healthTransition:
            let reason = fields["reason"].map { ": \($0)" } ?? ""
            return "Application \(app): health check \(field("check")) \(field("state_from")) → \(field("state_to"))\(reason)"
        case .startup:
            let duration = Double(field("duration_usec")).map { "\($0 / 1_000) ms" } ?? "?"
            let chain = fields["chain"].flatMap { $0.isEmpty ? nil : "; slowest chain \($0), slowest \(field("slowest"))" } ?? ""
            return "Application \(app): startup resolutions took \(duration) over \(field("runs")) dependencies\(chain)"
        }
    }
}
