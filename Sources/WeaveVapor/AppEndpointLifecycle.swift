// Built with the package trait Vapor only (`traits: ["Vapor"]` on the dependency).
#if Vapor
import Logging
import ServiceLifecycle
import Synchronization
public import Vapor
public import WeaveAppEndpoint

extension Application {
    /// Runs `endpoint` (its health checks and its socket, where weave-healthd finds the
    /// application) from the application's boot to its shutdown: Vapor 4's counterpart of
    /// Hummingbird's `Application(router:services: [endpoint])`.
    ///
    /// ```swift
    /// app.addWeaveEndpoint(endpoint)
    /// app.addWeaveHealthRoutes(endpoint.router)   // optional: the endpoints in the app's own routes too
    /// ```
    ///
    /// Vapor's shutdown is a graceful one for the endpoint: its socket is removed, so the daemon
    /// sees the application leave, not fail.
    public func addWeaveEndpoint(_ endpoint: AppEndpoint) {
        lifecycle.use(AppEndpointLifecycle(endpoint: endpoint, logger: logger))
    }
}

/// Starts an `AppEndpoint` in a `ServiceGroup` of its own when Vapor has booted (`boot()` or
/// `asyncBoot()`, which both call `didBoot`), and shuts the group down gracefully when Vapor shuts
/// down: `asyncShutdown()` waits for the socket to be removed; the synchronous `shutdown()`, which
/// cannot wait, starts the graceful shutdown and returns. Signals stay Vapor's: the group installs none.
final class AppEndpointLifecycle: LifecycleHandler {
    private let endpoint: AppEndpoint
    private let logger: Logger
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, Never>)?>(nil)

    init(endpoint: AppEndpoint, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
    }

    func didBoot(_ application: Application) throws {
        let group = ServiceGroup(configuration: .init(services: [.init(service: endpoint)], logger: logger))
        let task = Task { [logger] in
            do {
                try await group.run()
            } catch {
                logger.error("The weave endpoint stopped: \(error)")
            }
        }
        running.withLock { $0 = (group, task) }
    }

    func shutdownAsync(_ application: Application) async {
        guard let (group, task) = running.withLock({ $0.take() }) else { return }
        await group.triggerGracefulShutdown()
        await task.value
    }

    func shutdown(_ application: Application) {
        guard let (group, _) = running.withLock({ $0.take() }) else { return }
        Task { await group.triggerGracefulShutdown() }
    }
}

#endif
