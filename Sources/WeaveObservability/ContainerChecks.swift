public import Logging
import WeaveDI
import WeaveHealth

extension Container {
    /// The services of this container whose instances conform to `HealthCheckable`, by check name
    /// (the registration name, else the type's name). Shared scopes only: a transient instance
    /// made just to be checked would check nothing that serves requests. A shared service with an
    /// async factory is made (awaited) if nothing has resolved it yet, as a sync one is.
    func healthCheckables() async -> [(String, any HealthCheckable)] {
        await sharedInstances().compactMap { name, instance in (instance as? any HealthCheckable).map { (name, $0) } }
    }
}

extension HealthMonitor {
    /// A monitor of `container`'s `HealthCheckable` services (found again at each round) and the
    /// checks registered with it by name.
    public init(container: Container, defaultSettings: HealthCheckSettings = .init(), maxConcurrentChecks: Int = 64,
                logger: Logger = Logger(label: "weave.health")) {
        self.init(defaultSettings: defaultSettings, maxConcurrentChecks: maxConcurrentChecks, logger: logger,
                  discover: { [container] in await container.healthCheckables() })
    }
}
