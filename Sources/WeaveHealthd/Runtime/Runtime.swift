import WeaveDI
import WeaveHealth
import WeaveHealthServer
import WeaveObservability

/// What one configuration runs: the daemon's own instrumented container, in which every check is a
/// registered `HealthCheckable` service (so `/metrics` shows the daemon's resolve timings too), and
/// the health monitor over it. A reload makes a new one, which takes effect at one moment: when it
/// is swapped in (`DaemonSource.replace`), with what `takeEffect` applies.
final class Runtime: Sendable {
    let configuration: DaemonConfiguration
    let container: Container
    let monitor: HealthMonitor
    let observations = Observations()
    /// The applications this configuration aggregates.
    let apps: AppFleet
    /// What it changes outside itself, applied when it is swapped in: the router's policy, say.
    private let onSwap: @Sendable (DaemonConfiguration) -> Void

    /// - Parameter onSwap: what else it changes, applied when it is swapped in (`takeEffect`).
    init(configuration: DaemonConfiguration, shared: DaemonShared, onSwap: @escaping @Sendable (DaemonConfiguration) -> Void = { _ in }) async {
        self.configuration = configuration
        self.onSwap = onSwap
        let (group, blocking) = (shared.group, shared.blocking)
        container = Container(settings: configuration.instrumentation)
        let defaults = HealthCheckSettings(interval: Defaults.checkInterval, timeout: Defaults.checkTimeout)
        monitor = HealthMonitor(container: container, defaultSettings: defaults)
        apps = AppFleet(configuration: configuration.apps, group: group, connections: shared.connections, blocking: blocking,
                       owners: shared.owners, events: shared.events, lifecycle: shared.lifecycle, watches: shared.watches,
                       ownSockets: shared.ownSockets,
                       trimmer: shared.trimmer)
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

    /// Applies what this runtime changes outside itself; called once, as it is swapped in.
    func takeEffect() {
        apps.events.limit = configuration.logRateLimit
        onSwap(configuration)
    }

    /// Why a reload to `configuration` must be refused while this runtime runs, if it must, and the
    /// top-level key it is about: what a reload cannot change (the bound `listeners`, unless systemd
    /// passed them; the kernel's memory-pressure trigger, armed once at start).
    func refusal(of configuration: DaemonConfiguration, listeners: [Listener], socketActivated: Bool) -> (key: String, message: String)? {
        if !socketActivated, configuration.listeners != listeners {
            return ("listen", "listen: changed from \(listeners.map(\.description).joined(separator: ", ")) "
                + "to \(configuration.listeners.map(\.description).joined(separator: ", ")); a reload cannot rebind "
                + "the listeners: restart weave-healthd to apply it")
        }
        let running = self.configuration.memoryPressureTrigger
        if configuration.memoryPressureTrigger != running {
            return ("memory_pressure", "memory_pressure: trigger changed from '\(running)' to '\(configuration.memoryPressureTrigger)'; "
                + "a reload cannot re-arm the kernel's trigger: restart weave-healthd to apply it")
        }
        return nil
    }
}
