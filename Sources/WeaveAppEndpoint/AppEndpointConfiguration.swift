import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveObservability
import WeavePrometheus
import WeaveSupport

extension AppEndpoint {
    /// Where the endpoint listens and what it shows.
    public struct Configuration: Sendable {
        /// The directory of `.discoverable()`: `$WEAVE_APPS_DIR` when it is an absolute path (a daemon
        /// watching another directory, a test, a user without group `weave`), else the one
        /// weave-healthd watches by default, `/run/weave/apps`. Read when a configuration is made.
        public static var defaultDirectory: String {
            guard let value = getenv("WEAVE_APPS_DIR").map({ String(cString: $0) }), value.hasPrefix("/") else {
                return AppSocket.defaultDirectory
            }
            return value
        }

        /// The endpoint's Unix socket.
        public enum Socket: Sendable, Equatable {
            /// `<directory>/<name>.sock`, where the daemon discovers it (the name is the identity's
            /// `serviceID`, with characters other than letters, digits, `.`, `_` and `-` made `_`).
            case discoverable(directory: String = Configuration.defaultDirectory)
            /// A socket at this path, for a daemon configured to read it (`apps: targets:`).
            case path(String)
            /// No socket: only `tcp`, or only the routes mounted in the application's own router.
            case none
        }

        public var socket: Socket
        /// The socket file's mode: 0660 lets the socket's group (the daemon's) connect.
        public var socketMode: UInt32
        /// A TCP listener as well, such as `127.0.0.1:9400`.
        public var tcp: (host: String, port: Int)?
        /// Whether health bodies carry each check's reason on the TCP listener and on the routes
        /// mounted in the application's own router. Private (`.never`) unless the application opts
        /// in: the reasons of an application's checks go to its log.
        public var details: DetailsPolicy
        /// Whether they carry it on the Unix socket, which only the application's user and the
        /// socket's group (the daemon's, `weave`) can open: `.always` by default, so the daemon
        /// shows the host's operator why a check is degraded or failing. The daemon's own
        /// `details:` then decides what its clients see.
        public var socketDetails: DetailsPolicy
        /// The bearer token when `details` is `.whenAuthorized`.
        public var bearerToken: String?
        /// Interval, timeout and damping of checks that have no settings of their own.
        public var healthCheckDefaults: HealthCheckSettings
        /// Open connections at most: the daemon needs two per scrape.
        public var maxConnections: Int
        /// Whether `run()` watches memory pressure for the container (a `MemoryPressureMonitor` of its
        /// own, stopped with it), so `.cached` instances are evicted and `onMemoryPressure` handlers run.
        public var watchesMemoryPressure: Bool
        /// Which dependencies keep their 12 factory buckets in `/metrics` (the cardinality control;
        /// `.default`, the 10 slowest).
        public var resolveBuckets: ResolveBuckets
        /// The least time between two `/metrics` renders: a request that comes sooner waits for it
        /// to pass and shares the next render, so clients asking in a loop cost the application one
        /// render, and one answer each, per this, whatever their number. One second by default,
        /// below any scrape interval.
        public var metricsReuse: Duration
        /// Whether the application also logs its container's slow resolutions and resolution
        /// errors itself while its socket serves. Off by default: weave-healthd reads them from
        /// `/events` and writes each once to the journal, with the application's name and its
        /// `MESSAGE_ID`; on, each is there twice. Without a socket (`.none`, or one that cannot be
        /// made), the container logs them whatever this says.
        public var logsContainerEvents: Bool

        public init(socket: Socket = .discoverable(), socketMode: UInt32 = 0o660, tcp: (host: String, port: Int)? = nil,
                    details: DetailsPolicy = .never, socketDetails: DetailsPolicy = .always, bearerToken: String? = nil,
                    healthCheckDefaults: HealthCheckSettings = HealthCheckSettings(), maxConnections: Int = 64,
                    watchesMemoryPressure: Bool = true, resolveBuckets: ResolveBuckets = .default, metricsReuse: Duration = .seconds(1),
                    logsContainerEvents: Bool = false) {
            self.socket = socket
            self.socketMode = socketMode
            self.tcp = tcp
            self.details = details
            self.socketDetails = socketDetails
            self.bearerToken = bearerToken
            self.healthCheckDefaults = healthCheckDefaults
            self.maxConnections = max(maxConnections, 4)
            self.watchesMemoryPressure = watchesMemoryPressure
            self.resolveBuckets = resolveBuckets
            self.metricsReuse = metricsReuse
            self.logsContainerEvents = logsContainerEvents
        }

        /// The listeners for an application called `identity.serviceID`.
        func listeners(for identity: ServiceIdentity) -> [Listener] {
            var listeners: [Listener] = []
            switch socket {
            case .discoverable(let directory):
                listeners.append(.unix(path: directory + "/" + Self.socketName(identity.serviceID) + AppSocket.suffix, mode: socketMode))
            case .path(let path):
                listeners.append(.unix(path: path, mode: socketMode))
            case .none:
                break
            }
            if let tcp { listeners.append(.tcp(host: tcp.host, port: tcp.port)) }
            return listeners
        }

        /// `name` as a socket file name and the daemon's `app` label: `[A-Za-z0-9._-]`, at most 128
        /// bytes, never empty or hidden.
        public static func socketName(_ name: String) -> String { AppSocket.name(for: name) }
    }
}
