public import Logging
import WeaveDI
import WeaveHealth

extension Container {
    /// The services of this container whose instances conform to `HealthCheckable`, by check name
    /// (the registration name, else the type's name). Shared scopes only: a transient instance
    /// made just to be checked would check nothing that serves requests. An instance nothing has made
    /// yet is made (an async factory awaited) only when it is registered as `(any HealthCheckable).self`
    /// or as a type that conforms; a service registered under another type (a plain singleton, a
    /// protocol of its own) is never made by a health round, and is checked once the application makes it.
    func healthCheckables() async -> [(String, any HealthCheckable)] {
        await sharedInstances(making: { $0 is any HealthCheckable.Type || $0 == (any HealthCheckable).self })
            .compactMap { name, instance in (instance as? any HealthCheckable).map { (name, $0) } }
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
