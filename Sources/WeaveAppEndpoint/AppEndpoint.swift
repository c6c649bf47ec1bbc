import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import WeaveDI
import WeaveHealth
import WeaveHealthServer
import WeavePrometheus
import WeaveSupport

/// What an application serves so that weave-healthd (or anyone allowed) can see inside it: its
/// container's statistics and its health checks, at `/metrics`, `/health`, `/livez` and `/readyz`.
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
    private let server: HealthServer?
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
        let listeners = configuration.listeners(for: identity)
        var server = HealthServerConfiguration(listeners: listeners, detailsPolicy: configuration.details,
                                               bearerToken: configuration.bearerToken)
        server.maxConnections = configuration.maxConnections
        server.reservedConnections = min(server.reservedConnections, configuration.maxConnections / 4)
        router = HealthRouter(
            configuration: server, identity: identity,
            collectors: [
                ContainerMetrics { container.statistics() },
                HealthMetrics { monitor.latestReport },
            ] + collectors + [ProcessMetrics(), BuildInfo(identity: identity)],
            source: MonitorHealthSource(monitor: monitor), lifecycle: ServerLifecycle())
        self.server = listeners.isEmpty ? nil : HealthServer(router: router, group: group, logger: logger)
    }

    /// The addresses listened on, once `run()` has bound them.
    public var boundListeners: [String]? { server?.boundListeners }

    public func run() async throws {
        if case .discoverable(let directory) = configuration.socket { try Self.prepare(directory: directory) }
        if configuration.watchesMemoryPressure { MemoryPressureMonitor.shared.start() }
        defer { removeSocket() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [monitor, lifecycle = router.lifecycle] in
                _ = await monitor.checkAll()
                lifecycle.markStarted()
                await monitor.run()
            }
            if let server {
                group.addTask { try await server.run() }
            } else {
                group.addTask { [lifecycle = router.lifecycle] in
                    try? await gracefulShutdown()
                    lifecycle.markStopping()
                }
            }
            // The server (or the wait) returns at graceful shutdown; then the checks stop.
            try await group.next()
            group.cancelAll()
        }
    }

    private func removeSocket() {
        for case .unix(let path, _) in router.configuration.listeners { unlink(path) }
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

/// The endpoint could not be set up.
public struct AppEndpointError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// The health of a monitor, as the endpoints read it.
struct MonitorHealthSource: HealthSource {
    let monitor: HealthMonitor

    func healthReport() async -> HealthReport { monitor.latestReport }

    func observedValue(of check: String) async -> (value: Double, unit: String)? { nil }
}
