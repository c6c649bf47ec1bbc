import Logging
import NIOCore
import WeaveDI
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
    let group: any EventLoopGroup
    let logger: Logger
    let states = Locked<[String: AppState]>([:])
    /// One idle connection per application between its scrapes and health rounds, as many as it holds.
    let connections: ConnectionPool
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
    /// What `leavingGrace` is measured on (a test passes a clock it moves).
    let clock: ElapsedClock
    /// Where systemd is asked about an application's unit (sd-bus blocks).
    let blocking: BlockingCalls
    /// Told when a round of requests to applications ends, whose megabytes the heap keeps until
    /// rounds stop (shared by every runtime; none in tests).
    let trimmer: HeapTrimmer?
    /// The sockets the directory held when it was last listed, and why the last listing failed.
    let discovery = Locked<(found: [AppTarget], failure: String?)>(([], nil))
    /// The scrape in progress, which a `/metrics` asked meanwhile shares, by whether it asks for
    /// native histograms.
    let scraping = Locked<[Bool: Task<[Scrape], Never>]>([:])
    /// The paths of the daemon's own Unix socket listeners: a socket in the directory that is one of
    /// them (a link to it, say) is the daemon itself, which would wait on its own `/metrics` and
    /// report itself as its own component. Those already logged, once each.
    let ownSockets: [String]
    let skippedOwn = Locked<Set<String>>([])
    /// Whether a failed `GetUnitByPID` was logged (once: without a bus, every application fails alike).
    let unitLookupLogged = Locked(false)
    /// The applications whose checks a scrape showed in another state than their last `/health`
    /// read, to be read again at once (`AppHealthService`), and when each was last brought forward:
    /// at most once per `health_interval` each, and never another application's round (#66).
    let healthStale = Locked<(apps: Set<String>, broughtForward: [String: ContinuousClock.Instant])>(([], [:]))
    /// Requests of a side endpoint (`/events`, `/dependencies`) to applications that failed it when
    /// last asked, which their round does not wait for, by path and application: a round skips an
    /// application whose last one is still running.
    let stragglers = Locked<Set<String>>([])
    /// How the last request for each path actually sent to each application went (one the budget
    /// left unasked does not count), by path and application; none before the first. Those that
    /// failed are asked after the others for that path, and those refused last: an application
    /// that answers `/health` and hangs `/metrics` is asked late for `/metrics`.
    let answeredWhenAsked = Locked<[String: [String: LastAnswer]]>([:])

    /// How an application's last request for a path went.
    enum LastAnswer: Sendable {
        case answered
        /// Failed after a connection, or by its deadline: it may take its whole time again.
        case failed
        /// Refused at once: nobody listens on its socket (a stale one), or it is gone. It costs the
        /// next round no time, so it takes no share of the budget from the others (#64: 4,096
        /// stale sockets cut every request's share to 19 ms).
        case refused
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
         leavingGrace: Duration = .seconds(10), clock: ElapsedClock = .continuous, trimmer: HeapTrimmer? = nil,
         logger: Logger = Logger(label: "weave.healthd.apps")) {
        self.leavingGrace = leavingGrace
        self.clock = clock
        self.trimmer = trimmer
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
}
