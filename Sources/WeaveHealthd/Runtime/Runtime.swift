import Logging
import NIOCore
import WeaveDI
import WeaveHealth
import WeaveObservability

/// What one configuration runs: the daemon's own instrumented container, in which every check is a
/// registered `HealthCheckable` service (so `/metrics` shows the daemon's resolve timings too), and
/// the health monitor over it.
final class Runtime: Sendable {
    let configuration: DaemonConfiguration
    let container: Container
    let monitor: HealthMonitor
    let observations = Observations()
    /// The applications this configuration aggregates.
    let apps: AppFleet

    /// - Parameters:
    ///   - connections: the daemon's kept connections to applications, shared by every runtime.
    ///   - blocking: where blocking library calls run, shared by every runtime (a call of an old
    ///     one may still be running).
    ///   - ownSockets: the paths of the daemon's Unix socket listeners, which are not applications.
    ///   - owners: which user owns each application name, shared by every runtime.
    ///   - events: where the applications' events are written, shared by every runtime.
    ///   - lifecycle: what was told of each application's life, shared by every runtime.
    ///   - trimmer: told when a round of requests to applications ends, shared by every runtime.
    init(configuration: DaemonConfiguration, group: any EventLoopGroup, connections: ConnectionPool, blocking: BlockingCalls,
         owners: AppOwners = AppOwners(), events: AppEventJournal = AppEventJournal(limit: .default), lifecycle: AppLifecycle = AppLifecycle(),
         ownSockets: [String] = [], trimmer: HeapTrimmer? = nil) async {
        self.configuration = configuration
        container = Container(settings: configuration.instrumentation)
        let defaults = HealthCheckSettings(interval: Defaults.checkInterval, timeout: Defaults.checkTimeout)
        monitor = HealthMonitor(container: container, defaultSettings: defaults)
        apps = AppFleet(configuration: configuration.apps, group: group, connections: connections, blocking: blocking,
                       owners: owners, events: events, lifecycle: lifecycle, ownSockets: ownSockets, trimmer: trimmer)
        for check in configuration.checks {
            let (name, options, timeout, observations) = (check.name, check.options, check.settings.timeout, observations)
            // The container holds this factory, so the factory holds the container unowned.
            container.register(name, (any HealthCheckable).self, scope: .singleton) { [unowned container] in
                ObservedCheck(name: name, check: options.makeCheck(CheckContext(name: name, timeout: timeout, group: group, blocking: blocking,
                                                                                observations: observations, container: container)),
                              observations: observations)
            }
            await monitor.configure(check.name, settings: check.settings)
        }
    }
}
