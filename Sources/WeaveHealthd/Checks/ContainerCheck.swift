import WeaveDI
import WeaveHealth
import WeaveSupport

/// The daemon's own container: unhealthy when resolution errors happened since the last run,
/// degraded when slow resolutions did.
///
/// The check lives inside the container it watches (a singleton there), so it holds the container
/// weakly: a strong reference would be a cycle, and every reload would leak the old runtime.
final class ContainerCheck: HealthCheckable {
    private let statistics: @Sendable () -> ContainerStatistics?
    private let last = Locked<(errors: UInt64, slow: UInt64)?>(nil)

    init(container: Container) {
        statistics = { [weak container] in container?.statistics() }
    }

    func healthCheck() async -> HealthStatus {
        guard let statistics = statistics() else { return .unhealthy(error: CheckFailure("the container is gone")) }
        let errors = statistics.services.reduce(0) { $0 + $1.errorCount }
        let slow = statistics.services.reduce(0) { $0 + $1.slowResolutions }
        let previous = last.withLock { value in defer { value = (errors, slow) }; return value } ?? (errors: errors, slow: slow)
        if errors > previous.errors { return .unhealthy(error: CheckFailure("\(errors - previous.errors) resolution errors since the last check")) }
        if slow > previous.slow { return .degraded(reason: "\(slow - previous.slow) slow resolutions since the last check") }
        return .healthy
    }
}

extension ContainerCheck {
    /// `type: container`: no keys of its own.
    struct Options: CheckOptions {
        static let typeName = "container"
        static let keys: Set<String> = []

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {}

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            ContainerCheck(container: context.container)
        }
    }
}
