public import Logging
public import NIOCore
public import NIOPosix
public import ServiceLifecycle
import WeaveContainerRoutes
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveMemoryPressure
import WeaveObservability
import WeavePrometheus
import WeaveSupport
import WeaveTracing

/// What an application serves so that weave-healthd (or anyone allowed) can see inside it: its
/// container's statistics, its health checks and its events, at the routes of
/// `HealthRoute.standard` and the container's (`/metrics`, `/health`, the probes, `/dependencies`
/// for the daemon's status page, and `/events` for the daemon's journal).
/// One `Service` for the application's `ServiceGroup`: it runs the health checks (one round, then
/// readiness passes, then on their intervals) and the endpoint's server, until graceful shutdown.
///
/// By default it listens on a Unix socket named after the application in the directory the daemon
/// watches (`/run/weave/apps/<name>.sock`, mode 0660), so the daemon finds it with no configuration;
/// the socket is removed when the service stops. `router` can be mounted in the application's own
/// HTTP router as well (see the Hummingbird and Vapor adapters).
public final class AppEndpoint: Service, Sendable {
    /// Serves the endpoints: mount it in an application's router, or leave it to `run()`.
    public let router: HealthRouter
    /// Runs the application's `HealthCheckable` services and named checks.
    public let monitor: HealthMonitor
    public let configuration: Configuration
    /// The container's events, which `/events` serves (weave-healthd writes them to its journal):
    /// those from this endpoint's creation on, and the container's startup.
    public let events: ContainerEventLog
    /// Feed `events` from the container's hooks while this endpoint lives.
    private let eventHooks: [HookToken]
    private let container: Container
    private let server: HealthServer?
    /// Relieves the container under memory pressure while `run()` runs (`watchesMemoryPressure`).
    private let pressure: MemoryPressureMonitor?
    private let logger: Logger

    /// - Parameters:
    ///   - container: whose services are counted and checked (usually `.live`, `UnifiedDI`'s).
    ///   - identity: the application's name (the socket's name, `/health`'s `serviceId`), version and instance.
    ///   - monitor: a monitor of the container with checks of its own; by default one made here.
    ///   - collectors: further metric families, such as `ExpositionText` over a swift-prometheus registry.
    public init(container: Container, identity: ServiceIdentity, configuration: Configuration = Configuration(),
                monitor: HealthMonitor? = nil, collectors: [any MetricCollector] = [],
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                logger: Logger = Logger(label: "weave.app.endpoint")) {
        self.configuration = configuration
        self.logger = logger
        let monitor = monitor ?? HealthMonitor(container: container, defaultSettings: configuration.healthCheckDefaults)
        self.monitor = monitor
        self.container = container
        let events = ContainerEventLog()
        self.events = events
        eventHooks = events.recordEvents(of: container)
        let listeners = configuration.listeners(for: identity)
        let policy = HealthPolicy(detailsPolicy: configuration.details,
                                  unixSocketDetailsPolicy: configuration.socketDetails, bearerToken: configuration.bearerToken,
                                  metricsReuse: configuration.metricsReuse)
        var server = HealthServerConfiguration(listeners: listeners)
        server.maxConnections = configuration.maxConnections
        server.reservedConnections = min(server.reservedConnections, configuration.maxConnections / 4)
        router = HealthRouter(
            policy: policy, identity: identity,
            collectors: [
                ContainerMetrics(buckets: configuration.resolveBuckets) { container.statistics() },
                HealthMetrics { monitor.latestReport },
            ] + collectors + [ProcessMetrics(), BuildInfo(identity: identity)],
            source: MonitorHealthSource(monitor: monitor), lifecycle: ServerLifecycle(),
            routes: [.dependencies({ container.statistics() }, startup: { container.startupTree }), .events(events)])
        self.server = listeners.isEmpty ? nil : HealthServer(router: router, configuration: server, group: group, logger: logger)
        pressure = configuration.watchesMemoryPressure ? MemoryPressureMonitor { container.relieveMemoryPressure() } : nil
        // The daemon reads the container's events from the socket and journals them, startup's
        // included: from here the application's own records of them wait for the socket, and are
        // written only if it never serves (`logsContainerEvents` keeps them as they are).
        quiets = !configuration.logsContainerEvents && self.server != nil && container.instrumentation.logsEvents
        if quiets { container.instrumentation.holdEventLogs() }
    }

    /// Whether the application's own records of its container's events give way to the daemon's.
    private let quiets: Bool

    /// How often the monitor looks for services at the latest: the container's changes wake it
    /// within a second, and each check runs when it is due whatever this is; what a tick still finds
    /// is a weakly held service gone. An idle application wakes this often, not every second. (Over
    /// dispatch's 5 s, after which an idle worker thread ends and the next wake makes another.)
    static let discoveryTick = Duration.seconds(30)

    deinit {
        for token in eventHooks { token.cancel() }
        if quiets { container.instrumentation.releaseEventLogs(writing: true) }
    }

    /// The addresses listened on, once `run()` has bound them.
    public var boundListeners: [String]? { server?.boundListeners }

    /// Runs until graceful shutdown (or cancellation). A socket that cannot be made (a directory the
    /// application may not write, say) is logged as an error and the rest goes on: the checks run and
    /// routes mounted in the application's router answer. Observability never stops the application.
    public func run() async throws {
        var server = self.server
        if case .discoverable(let directory) = configuration.socket {
            do {
                try Self.prepare(directory: directory)
            } catch {
                logger.error("No endpoint socket: \(error); the health checks still run", metadata: ["directory": "\(directory)"])
                server = nil
            }
        }
        let instrumentation = container.instrumentation
        if quiets, server == nil { instrumentation.releaseEventLogs(writing: true) }
        pressure?.start()
        defer { pressure?.stop() }
        // Its factory runs inside traced requests become spans, when the application bootstrapped a tracer.
        container.traceFactoryRunsWithBootstrappedTracer()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [events, monitor] in await events.recordTransitions(of: monitor) }
            group.addTask { [monitor, container, lifecycle = router.lifecycle] in
                _ = await monitor.checkAll()
                lifecycle.markStarted()
                // Ready: what was resolved until now is the application's startup.
                container.endStartup()
                await monitor.run(tick: Self.discoveryTick)
            }
            group.addTask { [logger, server, quiets, lifecycle = router.lifecycle] in
                if let server {
                    // Serving, the daemon journals the events, those held since `init` included: the
                    // application does not log them a second time (`logsContainerEvents`).
                    defer { if quiets { instrumentation.logsEvents = true } }
                    do {
                        try await server.run {
                            guard quiets else { return }
                            instrumentation.logsEvents = false
                            instrumentation.releaseEventLogs(writing: false)
                        }
                        return
                    } catch {
                        if quiets { instrumentation.releaseEventLogs(writing: true) }
                        logger.error("The endpoint cannot listen: \(error); the health checks still run")
                    }
                }
                try? await gracefulShutdown()
                lifecycle.markStopping()
            }
            // The server (or the wait) returns at graceful shutdown; then the checks stop.
            await group.next()
            group.cancelAll()
        }
    }

    /// Creates the discovery directory when it is missing (mode 0755: the daemon needs only to list it).
    static func prepare(directory: String) throws {
        var components: [String] = []
        for part in directory.split(separator: "/") {
            components.append(String(part))
            let path = "/" + components.joined(separator: "/")
            if mkdir(path, 0o755) != 0, errno != EEXIST {
                throw AppEndpointError(message: "cannot create \(path): \(SystemError.text(errno))")
            }
        }
    }
}

/// The endpoint could not be set up (logged by `run()`, which goes on without its socket).
struct AppEndpointError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The health of a monitor, as the endpoints read it.
struct MonitorHealthSource: HealthSource {
    let monitor: HealthMonitor

    func healthReport() -> HealthReport { monitor.latestReport }

    func indexedHealthReport() -> (report: HealthReport, index: String) { monitor.latestIndexedReport }

    var changes: ChangeSignal? { monitor.changes }

    func observedValue(of check: String) -> (value: Double, unit: String)? { nil }
}
