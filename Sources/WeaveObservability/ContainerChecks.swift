public import Logging
import WeaveDI
import WeaveHealth
import WeaveSupport

extension Container {
    /// The services of this container whose instances conform to `HealthCheckable`, by check name
    /// (the registration name, else the type's name), and whether any is held weakly. Shared scopes
    /// only: a transient instance made just to be checked would check nothing that serves requests.
    /// An instance nothing has made yet is made (an async factory awaited) only when it is registered
    /// as `(any HealthCheckable).self` or as a type that conforms; a service registered under another
    /// type (a plain singleton, a protocol of its own) is never made by a health round, and is checked
    /// once the application makes it.
    func healthCheckables() async -> (checks: [(String, any HealthCheckable)], holdsWeak: Bool) {
        let found = await sharedInstances(making: { $0 is any HealthCheckable.Type || $0 == (any HealthCheckable).self })
        let checks = found.compactMap { name, instance, _ in (instance as? any HealthCheckable).map { (name, $0) } }
        return (checks, found.contains { $0.weak && $0.instance is any HealthCheckable })
    }
}

/// A container's `HealthCheckable` services as last found, and the container's
/// `sharedInstancesVersion` then: found again only when the version moved, so an idle application's
/// monitor costs nothing per round. Not kept when a weak instance is among them: keeping it would
/// keep it alive (a monitor never changes what it watches).
private final class FoundChecks: Sendable {
    private let found = Locked<(version: UInt64, checks: [(String, any HealthCheckable)])?>(nil)

    func checks(of container: Container) async -> [(String, any HealthCheckable)] {
        let version = container.sharedInstancesVersion
        if let kept = found.withLock({ $0 }), kept.version == version { return kept.checks }
        // The version read before looking: a change meanwhile makes the next round look again.
        let (checks, holdsWeak) = await container.healthCheckables()
        found.withLock { $0 = holdsWeak ? nil : (version, checks) }
        return checks
    }
}

extension HealthMonitor {
    /// A monitor of `container`'s `HealthCheckable` services (found again within a second of the
    /// container changing, and at each tick) and the checks registered with it by name.
    public init(container: Container, defaultSettings: HealthCheckSettings = .init(), maxConcurrentChecks: Int = 64,
                logger: Logger = Logger(label: "weave.health")) {
        let found = FoundChecks()
        self.init(defaultSettings: defaultSettings, maxConcurrentChecks: maxConcurrentChecks, logger: logger,
                  discoveryChanges: container.sharedInstancesChanged,
                  discover: { [container] in await found.checks(of: container) })
    }
}
