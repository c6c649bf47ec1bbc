import Logging
import NIOCore
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveObservability
import WeavePrometheus
import WeaveSupport
import WeaveSystemd

/// The applications one configuration aggregates: the targets it names, plus a socket per
/// `<name>.sock` in the watched directory, listed afresh at every scrape and health round, so an
/// application appears (or leaves, with its socket) without a reload.
///
/// Each application is read concurrently with the others, each request within `timeout` and a
/// scrape within `budget`: one that is slow, gone or talking nonsense is down on its own, with its
/// reason, and never delays or breaks the rest.
final class AppFleet: Sendable {
    let configuration: AppsConfiguration
    private let group: any EventLoopGroup
    private let logger: Logger
    private let states = Locked<[String: AppState]>([:])
    /// One idle connection per application between its scrapes and health rounds, as many as it holds.
    private let connections: ConnectionPool
    /// Which user owns each application name (shared by every runtime).
    let owners: AppOwners
    /// Where the applications' events go, and how far each was read (shared by every runtime).
    let events: AppEventJournal
    /// What was told of each application's life, and which stopped with their unit enabled
    /// (shared by every runtime).
    let lifecycle: AppLifecycle
    /// How long a discovered application whose socket is gone while its process runs is given to
    /// end (a graceful stop removes the socket first, then drains) before it is down.
    let leavingGrace: Duration
    /// Where systemd is asked about an application's unit (sd-bus blocks).
    private let blocking: BlockingCalls
    /// The sockets the directory held when it was last listed, and why the last listing failed.
    private let discovery = Locked<(found: [AppTarget], failure: String?)>(([], nil))
    /// The scrape in progress, which a `/metrics` asked meanwhile shares, by whether it asks for
    /// native histograms.
    private let scraping = Locked<[Bool: Task<[Scrape], Never>]>([:])
    /// The paths of the daemon's own Unix socket listeners: a socket in the directory that is one of
    /// them (a link to it, say) is the daemon itself, which would wait on its own `/metrics` and
    /// report itself as its own component. Those already logged, once each.
    private let ownSockets: [String]
    private let skippedOwn = Locked<Set<String>>([])
    /// Whether a failed `GetUnitByPID` was logged (once: without a bus, every application fails alike).
    private let unitLookupLogged = Locked(false)
    /// Whether a scrape showed a check in another state than the last `/health` read: then the
    /// next health round is not left to wait for its interval (`AppHealthService`).
    private let healthStale = Locked(false)
    /// Requests of a side endpoint (`/events`, `/dependencies`) to applications that failed it when
    /// last asked, which their round does not wait for, by path and application: a round skips an
    /// application whose last one is still running.
    private let stragglers = Locked<Set<String>>([])
    /// Whether the last request for each path actually sent to each application was answered (one
    /// the budget left unasked does not count), by path and application; none before the first.
    /// Those that failed are asked last for that path: an application that answers `/health` and
    /// hangs `/metrics` is asked last for `/metrics`.
    private let answeredWhenAsked = Locked<[String: [String: Bool]]>([:])

    /// What the daemon knows of one application.
    struct AppState: Sendable {
        var target: AppTarget
        /// Why each of its endpoints (`/metrics`, `/health`) failed when last asked; empty when they
        /// answered. It is up when none fails: an application whose `/health` answers and whose
        /// `/metrics` does not is down until both answer, not up and down in turn.
        var failing: [String: String] = [:]
        /// Whether it was asked at all.
        var asked = false
        /// Whether its last request, whatever the path, got an HTTP answer (nothing did when it is
        /// killed, hangs or refuses): without one, its last `/health` is no longer its news.
        var answering = true
        /// The process that served its socket when last asked (`SO_PEERCRED`).
        var pid: Int32?
        /// The systemd unit that owns `pid`, as systemd said (`GetUnitByPID`), and the process it was
        /// asked for: asked again when another process serves the socket.
        var unit: String?
        var unitAskedFor: Int32?
        /// When its discovered socket was first found gone while its process still ran.
        var vanishedAt: ContinuousClock.Instant?

        /// Whether it answered; nil before it was asked.
        var reachable: Bool? { asked ? failing.isEmpty : nil }
        /// Why it is down, each distinct reason once.
        var reason: String? {
            guard !failing.isEmpty else { return nil }
            var seen: Set<String> = []
            return failing.sorted { $0.key > $1.key }.map(\.value).filter { seen.insert($0).inserted }.joined(separator: "; ")
        }
        /// Whether its `/health` could not be read, or it answers nothing at all: its components are
        /// then down with it (an invalid `/metrics` alone leaves them as its `/health` says).
        var healthUnread: Bool { failing["/health"] != nil || status == nil || !answering }
        /// Its last `/health`: the application's aggregate state, and each component's state and output.
        var status: HealthStatus?
        var components: [(name: String, status: HealthStatus, changedAt: Double?)] = []
        var checkedAt: Double = 0
        /// Its last `/dependencies`, for the status page; nil before the first, or when it has none.
        var dependencies: AppDependencies?
    }

    /// What the status page shows of one application.
    struct AppView: Sendable {
        let name: String
        let address: String
        /// Nil before its first answer.
        let reachable: Bool?
        let reason: String?
        let dependencies: AppDependencies?
    }

    /// One application's part of a scrape.
    struct Scrape: Sendable {
        let target: AppTarget
        /// Its families, relabelled with `app`; nil when it is down.
        let families: [MetricFamily]?
        let duration: Duration
    }

    /// How many applications are read at once, at most.
    static let maxConcurrentRequests = 16
    /// Components read from one application's `/health`, at most.
    static let maxComponents = 1_000
    /// The largest `/health` read from one application (1,000 components with reasons of 250 bytes):
    /// a larger one is not read past it, and the application is down with that reason.
    static let maxHealthBytes = 256 << 10
    /// What one round of `/health` keeps of all the applications' components (names and reasons),
    /// at most: an application whose components do not fit in what is left is down for that round.
    static let maxHealthKept = 16 << 20

    init(configuration: AppsConfiguration, group: any EventLoopGroup, connections: ConnectionPool,
         blocking: BlockingCalls = BlockingCalls(maxThreads: 2), owners: AppOwners = AppOwners(),
         events: AppEventJournal = AppEventJournal(limit: .default), lifecycle: AppLifecycle = AppLifecycle(), ownSockets: [String] = [],
         leavingGrace: Duration = .seconds(10), logger: Logger = Logger(label: "weave.healthd.apps")) {
        self.leavingGrace = leavingGrace
        self.configuration = configuration
        self.blocking = blocking
        self.owners = owners
        self.events = events
        self.lifecycle = lifecycle
        self.ownSockets = ownSockets
        self.group = group
        self.connections = connections
        self.logger = logger
    }

    // MARK: Discovery

    /// The configured targets, then one per socket in the directory (a configured name wins).
    ///
    /// A directory that does not exist holds no application. One that cannot be listed (out of
    /// descriptors, say) is not taken for empty: the sockets of its last listing stay targets, and
    /// the failure is logged once, so a passing failure never reports every application gone.
    func targets() -> [AppTarget] {
        var targets = configuration.targets
        guard let directory = configuration.directory else { return targets }
        let found = listSockets(in: directory)
        var names = Set(targets.map(\.name))
        targets += found.filter { names.insert($0.name).inserted }
        // Those whose socket is gone while their process has run on past the grace: down, and asked
        // no more (within the grace they keep their last state, unasked).
        targets += vanishedButRunning().filter { names.insert($0.name).inserted }
        // Those stopped while their unit stays enabled: down until they come back (`AppLifecycle`).
        targets += lifecycle.stoppedTargets().filter { names.insert($0.name).inserted }
        return targets.sorted { $0.name < $1.name }
    }

    /// The discovered applications whose socket has been gone for `leavingGrace` while the process
    /// that served it runs.
    private func vanishedButRunning() -> [AppTarget] {
        let now = ContinuousClock.now
        return states.withLock { states in
            states.values.filter { $0.vanishedAt.map { now - $0 >= leavingGrace } ?? false }.map(\.target)
        }
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// Whether the process `pid` still exists (it may be another user's: EPERM says it does).
    private static func isRunning(_ pid: Int32?) -> Bool {
        guard let pid else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// The sockets in `directory`, sorted by name; those of the last listing when it cannot be listed.
    private func listSockets(in directory: String) -> [AppTarget] {
        let files: [String]
        switch directoryNames(directory) {
        case .success(let names): files = names
        case .failure(let error) where error.code == ENOENT: return noteListing([], failure: nil, directory)
        case .failure(let error): return noteListing(nil, failure: SystemError.text(error.code), directory)
        }
        let own = ownFiles
        var found: [AppTarget] = []
        let present = Set(files.filter { $0.hasSuffix(AppSocket.suffix) }.map { String($0.dropLast(AppSocket.suffix.count)) })
        for file in files {
            guard file.hasSuffix(AppSocket.suffix) else { continue }
            let name = String(file.dropLast(AppSocket.suffix.count))
            let path = directory + "/" + file
            var status = stat(), link = stat()
            guard AppSocket.isValidName(name), stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK,
                  lstat(path, &link) == 0 else { continue }
            // The name belongs to the user whose socket first claimed it. A link counts only to a
            // socket of its own maker: the daemon connects where it points, and must not lend its
            // access to a socket the link's maker could not reach (or publish another's under a new name).
            let uid = link.st_mode & S_IFMT == S_IFLNK && link.st_uid != status.st_uid ? nil : status.st_uid
            guard owners.admit(name, uid: uid, linkOwner: link.st_uid, path: path, present: present) else { continue }
            if own.contains(where: { $0.st_dev == status.st_dev && $0.st_ino == status.st_ino }) {
                if skippedOwn.withLock({ $0.insert(path).inserted }) {
                    logger.warning("\(path) is weave-healthd's own socket, not an application's; it is skipped", metadata: ["path": "\(path)"])
                }
                continue
            }
            found.append(AppTarget(name: name, address: .unix(path: path), host: "localhost", pathPrefix: ""))
        }
        return noteListing(found.sorted { $0.name < $1.name }, failure: nil, directory)
    }

    /// The files of the daemon's own sockets, as they are now (a restart of its listener makes another).
    private var ownFiles: [stat] {
        ownSockets.compactMap { path in
            var status = stat()
            return stat(path, &status) == 0 ? status : nil
        }
    }

    /// Records a listing (`found`), or a failed one (nil, with why); returns the sockets to use.
    private func noteListing(_ found: [AppTarget]?, failure: String?, _ directory: String) -> [AppTarget] {
        let (sockets, previous) = discovery.withLock { discovery -> ([AppTarget], String?) in
            let previous = discovery.failure
            discovery.failure = failure
            if let found { discovery.found = found }
            return (discovery.found, previous)
        }
        if let failure, failure != previous {
            let kept = "the \(sockets.count) applications it last held stay"
            logger.warning("Cannot list the applications' directory \(directory): \(failure); \(kept)",
                           metadata: ["directory": "\(directory)", "reason": "\(failure)"])
        } else if failure == nil, previous != nil {
            logger.notice("The applications' directory \(directory) is listed again", metadata: ["directory": "\(directory)"])
        }
        return sockets
    }

    // MARK: Metrics

    /// Every application's `/metrics`, relabelled with `app` (`scrapeNow`). A scrape asked while
    /// another of the same kind is in progress shares it: two Prometheus servers scraping at once
    /// read the applications once, and hold one scrape's memory, not two.
    func scrape(native: Bool = false) async -> [Scrape] {
        let shared = scraping.withLock { scraping -> Task<[Scrape], Never> in
            if let running = scraping[native] { return running }
            let task = Task { [self] in
                let scrapes = await scrapeNow(native: native)
                self.scraping.withLock { $0[native] = nil }
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
    /// `/health`, the status page and `systemctl status` at the next health round, which it brings
    /// forward.
    private func noteCheckStates(_ scrapes: [Scrape]) {
        let stale = states.withLock { states in
            scrapes.contains { scrape in
                guard let families = scrape.families, let state = states[scrape.target.name], state.status != nil else { return false }
                let read = Dictionary(state.components.map { ($0.name, $0.status.state.rawValue) }) { $1 }
                return Self.checkStates(families).contains { read[$0.key] != $0.value }
            }
        }
        if stale { healthStale.withLock { $0 = true } }
    }

    /// Whether a scrape asked for an early health round since the last call.
    func takeHealthStale() -> Bool {
        healthStale.withLock { stale in
            defer { stale = false }
            return stale
        }
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
    private func overScrapeLimit(_ size: String) -> FetchFailure {
        FetchFailure("its answer (\(size)) does not fit in what is left of apps: max_scrape_bytes "
                     + "(\(configuration.maxScrapeBytes)) in this scrape")
    }

    // MARK: Health

    /// Reads every application's `/health` now.
    /// Returns how many applications it asked.
    @discardableResult
    func refreshHealth() async -> Int {
        // 503 carries a body too: a failing application's components are the point.
        let room = Locked(Self.maxHealthKept)
        let answers = await ask("/health", accept: "application/health+json", maxBytes: Self.maxHealthBytes) { _, response, _ throws(FetchFailure) in
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
        return answers.count
    }

    /// Reads every application's `/dependencies` now, for the status page. An application without
    /// the endpoint (an older WeaveAppEndpoint), or whose answer is not one, has no summary; it is
    /// not down for that: its `/health` and `/metrics` say whether it is.
    func refreshDependencies() async {
        let answers = await ask("/dependencies?limit=\(DependencySummary.defaultLimit)", accept: "application/json",
                                maxBytes: AppDependencies.maxBytes, notes: false) { _, response, _ throws(FetchFailure) in
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
    }

    /// Reads every application's new events (`/events` after the last one read), writes them to
    /// the journal (`AppEventJournal`) and then saves where it is in each. An application without the endpoint (an older
    /// WeaveAppEndpoint) has none; neither that nor a failed read says whether it is down.
    /// Returns how many applications it waited for.
    @discardableResult
    func refreshEvents() async -> Int {
        let (journal, owners) = (events, owners)
        let answers = await ask("/events", accept: "application/json", maxBytes: AppEventJournal.maxPageBytes, notes: false,
                      query: { "?after=\(journal.after($0.name))&limit=\(ContainerEventLog.maxPerRequest)" }) { target, response, _ throws(FetchFailure) in
            guard response.status == 200 else { return }
            try journal.ingest(target.name, response.body, owner: owners.owner(of: target.name))
        }
        await journal.persist(with: blocking)
        return answers.count
    }

    /// Asks systemd which unit owns each application's process, for those served by a process not
    /// asked about yet (`/proc` may hide other users' processes, so over the bus), a few at a time,
    /// after the round's health is applied. An answer, or systemd's refusal, is kept until another
    /// process serves the socket; a call that found no thread free is tried again next round. The
    /// first failure is logged.
    private func findUnits() async {
        let asking = states.withLock { states in
            states.values.compactMap { state -> (name: String, pid: Int32)? in
                // PID 1 made a socket-activated application's listener (SO_PEERCRED names whoever
                // called listen()): its unit, init.scope, is not the application's.
                guard let pid = state.pid, pid != 1, pid != state.unitAskedFor, state.target.unit == nil else { return nil }
                return (state.target.name, pid)
            }
        }
        let found = await withTaskGroup(of: (String, Int32, Result<String, SystemdUnit.Failure>).self) { group in
            var found: [(String, Int32, Result<String, SystemdUnit.Failure>)] = []
            for (index, app) in asking.enumerated() {
                if index >= Self.concurrentUnitLookups, let done = await group.next() { found.append(done) }
                group.addTask { [configuration, blocking] in
                    (app.name, app.pid, await SystemdUnit.unitName(ofProcess: app.pid, timeout: configuration.timeout, on: blocking))
                }
            }
            for await done in group { found.append(done) }
            return found
        }
        for (name, pid, result) in found {
            let notAsked = if case .failure(let failure) = result { !failure.reachedBus } else { false }
            states.withLock { states in
                guard states[name]?.pid == pid, !notAsked else { return }
                states[name]?.unitAskedFor = pid
                states[name]?.unit = try? result.get()
            }
            if case .failure(let failure) = result, unitLookupLogged.withLock({ logged in defer { logged = true }; return !logged }) {
                logger.info("Cannot ask systemd which unit runs application \(name) (pid \(pid)): \(failure); applications' units stay unknown",
                            metadata: ["app": "\(name)", "reason": "\(failure)"])
            }
        }
    }

    /// `GetUnitByPID` calls in flight at most (`BlockingCalls` has a few threads for every kind of call).
    static let concurrentUnitLookups = 4

    /// Each application's systemd unit, named by its target or found for its process.
    func units() -> [(app: String, unit: String)] {
        states.withLock { states in
            states.values.compactMap { state in (state.target.unit ?? state.unit).map { (state.target.name, $0) } }
        }.sorted { $0.app < $1.app }
    }

    /// Every application the fleet knows, by name.
    func views() -> [AppView] {
        states.withLock { states in
            states.values.map { AppView(name: $0.target.name, address: "\($0.target.address)", reachable: $0.reachable,
                                        reason: $0.reason, dependencies: $0.dependencies) }
        }.sorted { $0.name < $1.name }
    }

    /// Every application as health records: `<app>` (its own aggregate, or unhealthy when unreachable)
    /// and `<app>/<check>` for each component it last reported (unhealthy while it is unreachable).
    func healthRecords() -> [HealthCheckRecord] {
        let states = self.states.withLock { $0 }
        var records: [HealthCheckRecord] = []
        for state in states.values {
            // Reachable but not yet read is no news either way.
            guard let reachable = state.reachable, !reachable || state.status != nil else { continue }
            let down = HealthStatus.unhealthy(error: FetchFailure("\(state.target.name) is down: \(state.reason ?? "no answer")"))
            let time = state.checkedAt > 0 ? state.checkedAt : WallClock.now()
            // When a state began is the application's own time where it says it (one time per
            // transition everywhere), never later than the read that saw it.
            func record(_ name: String, _ status: HealthStatus, changedAt: Double? = nil) -> HealthCheckRecord {
                let changed = changedAt.map { min(max($0, 0), time) } ?? time
                return HealthCheckRecord(name: name, status: status, lastResult: status, changedAt: changed, checkedAt: time, lastDuration: .zero,
                                  consecutiveFailures: status.state == .unhealthy ? 1 : 0, consecutiveSuccesses: status.state == .healthy ? 1 : 0,
                                  groups: [HealthCheckSettings.application])
            }
            let unread = state.healthUnread
            records.append(record(state.target.name, reachable ? state.status! : down,
                                  changedAt: unread ? nil : state.components.compactMap(\.changedAt).max()))
            // Its components as it reported them, unless its /health itself cannot be read.
            for component in state.components {
                records.append(record(state.target.name + "/" + component.name, unread ? down : component.status,
                                      changedAt: unread ? nil : component.changedAt))
            }
        }
        return records
    }

    // MARK: Plumbing

    /// Runs `body` for every target, at most `maxConcurrentRequests` at a time, in asking order for
    /// `path` (`askingOrder`), each with how many targets were not started yet, itself included;
    /// results in target order.
    private func each<Result: Sendable>(_ targets: [AppTarget], path: String,
                                        _ body: @escaping @Sendable (AppTarget, _ remaining: Int) async -> Result) async -> [Result] {
        await withTaskGroup(of: (Int, Result).self) { group in
            var results: [(Int, Result)] = []
            for (started, index) in askingOrder(targets, path: path).enumerated() {
                if started >= Self.maxConcurrentRequests, let finished = await group.next() { results.append(finished) }
                group.addTask { [target = targets[index], remaining = targets.count - started] in (index, await body(target, remaining)) }
            }
            for await finished in group { results.append(finished) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// The indices of `targets` in the order to ask them for `path`: those that answered it when last
    /// asked, then those not asked yet, then those that failed, each in target order. Applications
    /// that hang hold a request slot for their whole time: asked first, enough of them would spend
    /// the budget before a healthy application was asked, at every scrape. (Each one's time is its
    /// share of the budget, `ask`, so that even the first round, in name order, asks every one.)
    private func askingOrder(_ targets: [AppTarget], path: String) -> [Int] {
        let answered = answeredWhenAsked.withLock { answered in targets.map { answered[path]?[$0.name] } }
        func rank(_ index: Int) -> Int {
            switch answered[index] {
            case true?: 0
            case nil: 1
            case false?: 2
            }
        }
        return targets.indices.sorted { (rank($0), $0) < (rank($1), $1) }
    }

    /// Asks every application for `path` at once (within `budget`), each answer read by `read` by
    /// the deadline of its request; records which answered (unless `notes` is false: an answer that
    /// does not say whether the application is up) and forgets those whose socket is gone. Outcomes
    /// in target order. With `room` (bytes the answers may still take), no answer is read past it.
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
    private func ask<Value: Sendable>(
        _ path: String, accept: String, room: Locked<Int>? = nil, maxBytes: Int? = nil, notes: Bool = true,
        query: (@Sendable (AppTarget) -> String)? = nil,
        read: @escaping @Sendable (AppTarget, HTTPFetch.Response, _ deadline: ContinuousClock.Instant) throws(FetchFailure) -> Value
    ) async -> [(target: AppTarget, outcome: Result<Value, FetchFailure>, duration: Duration)] {
        let deadline = ContinuousClock.now + configuration.budget
        let targets = targets()
        let askOne = { @Sendable [self] (target: AppTarget, remaining: Int) async
            -> (target: AppTarget, outcome: Result<Value, FetchFailure>, duration: Duration) in
            let start = ContinuousClock.now
            let outcome: Result<Value, FetchFailure>
            var answered = false
            var pid: Int32?
            let left = deadline - start
            let cap = min(maxBytes ?? configuration.maxResponseBytes, room?.withLock { $0 } ?? .max)
            do {
                guard left > .zero else { throw FetchFailure("the scrape budget of \(configuration.budget) was spent before it was asked") }
                if let vanished = vanished(target) { throw FetchFailure(vanished) }
                if lifecycle.isStopped(target.name), case .unix(let path) = target.address, !Self.exists(path) {
                    throw FetchFailure(Self.stoppedReason)
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
                outcome = .failure(FetchFailure(NetworkFailure.reason(error, target: target.address)))
            }
            // A request cut short by shutdown says nothing of the application: nothing is noted or logged.
            if notes, !Task.isCancelled {
                note(target, path: path, await withUnitState(outcome.map { _ in () }, of: target),
                     answered: answered, pid: pid)
            }
            if left > .zero, !Task.isCancelled {
                let succeeded = if case .success = outcome { true } else { false }
                answeredWhenAsked.withLock { $0[path, default: [:]][target.name] = succeeded }
            }
            return (target, outcome, ContinuousClock.now - start)
        }
        var awaited = targets
        if !notes {
            let failed = answeredWhenAsked.withLock { answered in Set(targets.filter { answered[path]?[$0.name] == false }.map(\.name)) }
            awaited.removeAll { failed.contains($0.name) }
            for target in targets where failed.contains(target.name) { askApart(target, path: path) { await askOne($0, 1) } }
        }
        let answers = await each(awaited, path: path, askOne)
        let names = Set(targets.map(\.name))
        answeredWhenAsked.withLock { $0[path] = $0[path]?.filter { names.contains($0.key) } }
        await forgetAllBut(targets.map(\.name))
        await lifecycle.persist(with: blocking)
        await owners.persist(with: blocking)
        connections.closeAll(except: Set(targets.map(\.address)))
        return answers
    }

    /// Asks `target` for the side endpoint `path` with `askOne` in a task of its own, unless its last
    /// such request is still running or `maxConcurrentRequests` are.
    private func askApart<Value: Sendable>(_ target: AppTarget, path: String,
                                           _ askOne: @escaping @Sendable (AppTarget) async -> Value) {
        let key = path + "\u{0}" + target.name
        let started = stragglers.withLock { running in
            running.count < Self.maxConcurrentRequests && running.insert(key).inserted
        }
        guard started else { return }
        Task { [stragglers] in
            _ = await askOne(target)
            stragglers.withLock { _ = $0.remove(key) }
        }
    }

    /// A failure of a target that names its systemd unit, with what systemd says of the unit: an
    /// application down and its unit in `activating (auto-restart)` tell one story.
    private func withUnitState(_ outcome: Result<Void, FetchFailure>, of target: AppTarget) async -> Result<Void, FetchFailure> {
        guard case .failure(let failure) = outcome,
              let unit = target.unit ?? states.withLock({ $0[target.name]?.unit }) else { return outcome }
        let state: String
        switch await SystemdUnit.read(unit, timeout: configuration.timeout, on: blocking) {
        case .success(let status):
            state = status.summary
            // A stopped application whose unit was started, disabled or removed: no longer kept as
            // a target, so that the next listing finds it back, or finds it gone and says it left.
            if lifecycle.isStopped(target.name), AppLifecycle.verdict(status) != .stopped { lifecycle.release(target.name) }
        case .failure(let error):
            state = "\(unit): \(error)"
        }
        return .failure(FetchFailure("\(failure.description); \(state)"))
    }

    /// Records whether `target` answered `path` (and which process served it), and logs when the
    /// application goes down or comes up: once per real change, whichever endpoint caused it.
    private func note(_ target: AppTarget, path: String, _ outcome: Result<Void, FetchFailure>, answered: Bool, pid: Int32?) {
        let failure: String? = if case .failure(let failure) = outcome { failure.description } else { nil }
        let (now, reason) = states.withLock { states -> (Bool?, String?) in
            var state = states[target.name] ?? AppState(target: target)
            state.target = target
            state.asked = true
            state.answering = answered
            if let pid { state.pid = pid }
            state.failing[path] = failure
            states[target.name] = state
            return (state.reachable, state.reason)
        }
        // Told once per change whatever the runtime: a reload's new fleet knows nothing yet, the
        // lifecycle does.
        if now == false, !isLeaving(target), lifecycle.announce(target.name, up: false) {
            logDown(target, reason: reason ?? "no answer")
        } else if now == true, lifecycle.announce(target.name, up: true) {
            logger.notice("Application \(target.name) is up at \(target.address)",
                          metadata: WeaveEvent.appUp.metadata(["app": "\(target.name)", "address": "\(target.address)"]))
        }
    }

    private func logDown(_ target: AppTarget, reason: String) {
        logger.warning("Application \(target.name) is down: \(reason)",
                       metadata: WeaveEvent.appDown.metadata(["app": "\(target.name)", "address": "\(target.address)", "reason": "\(reason)"]))
    }

    /// Why a stopped application is down, before what its unit says.
    static let stoppedReason = "it was stopped: its socket is gone and its unit is still enabled"

    /// Whether `target` is a discovered socket whose file is gone while the process that served it
    /// has ended too: a graceful stop removes the socket, then ends, so a request that failed
    /// meanwhile is its leaving (logged as such at the next listing), not its being down. A socket
    /// gone while its process runs on is not a leave (see `vanished`).
    private func isLeaving(_ target: AppTarget) -> Bool {
        guard case .unix(let path) = target.address, !configuration.targets.contains(where: { $0.name == target.name }) else {
            return false
        }
        var status = stat()
        guard stat(path, &status) != 0 && errno == ENOENT else { return false }
        let (pid, vanishedAt) = states.withLock { ($0[target.name]?.pid, $0[target.name]?.vanishedAt) }
        return !Self.isRunning(pid) || vanishedAt.map { ContinuousClock.now - $0 < leavingGrace } ?? true
    }

    /// Why `target` is down without asking it: its socket is gone and its process has run on for
    /// `leavingGrace` since (someone else removed the socket, or the application did without ending).
    private func vanished(_ target: AppTarget) -> String? {
        guard let (pid, since) = states.withLock({ states in states[target.name].flatMap { state in state.vanishedAt.map { (state.pid, $0) } } }),
              ContinuousClock.now - since >= leavingGrace, let pid else { return nil }
        return "its socket \(target.address) was removed, but the process that served it (pid \(pid)) still runs"
    }

    /// Forgets applications that are no longer targets (their socket is gone) and whose process has
    /// ended: they left, unless their systemd unit says otherwise (`AppLifecycle.verdict`): still
    /// enabled and inactive, they were stopped, and stay targets, down; starting or stopping, they
    /// are decided at a later round. One whose process still runs stays a target for
    /// `leavingGrace`, then is down.
    private func forgetAllBut(_ names: [String]) async {
        let keep = Set(names)
        let now = ContinuousClock.now
        let gone = states.withLock { states -> [(target: AppTarget, unit: String?)] in
            var gone: [(target: AppTarget, unit: String?)] = []
            for (name, state) in states {
                let socketThere = if case .unix(let path) = state.target.address { Self.exists(path) } else { true }
                let entry = (state.target, state.target.unit ?? state.unit)
                if keep.contains(name) {
                    // A target: one kept for its vanished socket is back, or has ended at last.
                    guard state.vanishedAt != nil else { continue }
                    if socketThere { states[name]?.vanishedAt = nil } else if !Self.isRunning(state.pid) { gone.append(entry) }
                } else if !socketThere, Self.isRunning(state.pid) {
                    if state.vanishedAt == nil { states[name]?.vanishedAt = now }
                } else {
                    gone.append(entry) // its socket gone with its process, or no longer a target at all
                }
            }
            return gone
        }
        var left: [String] = []
        for (target, unit) in gone {
            guard let unit, unit.hasSuffix(".service"),
                  case .success(let status) = await SystemdUnit.read(unit, timeout: configuration.timeout, on: blocking) else {
                left.append(target.name)
                continue
            }
            switch AppLifecycle.verdict(status) {
            case .left:
                left.append(target.name)
            case .changing:
                continue
            case .stopped:
                var stopped = target
                stopped.unit = unit
                lifecycle.stop(stopped)
                let reason = Self.stoppedReason + "; " + status.summary
                states.withLock { $0[target.name]?.failing = ["/health": reason] }
                if lifecycle.announce(target.name, up: false) { logDown(stopped, reason: reason) }
            }
        }
        // Each logged once, by the call that removed it.
        let removed = states.withLock { states in left.filter { states.removeValue(forKey: $0) != nil } }
        for name in removed.sorted() {
            events.forget(name)
            lifecycle.forget(name)
            logger.info("Application \(name) left: its socket is gone and its process has ended",
                        metadata: WeaveEvent.appLeft.metadata(["app": "\(name)"]))
        }
    }
}
