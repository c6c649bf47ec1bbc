import Logging
import NIOCore
import Synchronization
import WeaveSupport

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
    /// The watched directory, when discovery is on.
    let directory: AppDirectory?
    /// The scrape in progress, which a `/metrics` asked meanwhile shares, by whether it asks for
    /// native histograms.
    let scraping = Locked<[Bool: Task<[Scrape], Never>]>([:])
    /// Whether a failed `GetUnitByPID` was logged (once: without a bus, every application fails alike).
    let unitLookupLogged = Atomic<Bool>(false)
    /// The applications a scrape found disagreeing with their last `/health` read, to read again early.
    let earlyHealthReads = EarlyHealthReads()
    /// How each application answered each path when last asked, and the requests running apart.
    let answers = AppAnswers()
    /// The applications watched rather than polled (shared by every runtime).
    let watches: AppWatches

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
         events: AppEventJournal = AppEventJournal(limit: .default), lifecycle: AppLifecycle = AppLifecycle(),
         watches: AppWatches = AppWatches(capacity: 0), ownSockets: [String] = [],
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
        self.watches = watches
        directory = configuration.directory.map { AppDirectory(path: $0, owners: owners, ownSockets: ownSockets, logger: logger) }
        self.group = group
        self.connections = connections
        self.logger = logger
    }
}
