import WeaveHealth
import WeaveHealthRoutes
import WeaveSupport

/// The endpoints' view of the daemon: whatever runtime is current (a reload swaps it).
final class DaemonSource: HealthSource {
    private let current: Locked<Runtime>

    init(_ runtime: Runtime) {
        current = Locked(runtime)
    }

    var runtime: Runtime { current.withLock { $0 } }

    /// Swaps `runtime` in, and applies what it changes outside itself (`Runtime.takeEffect`).
    func replace(with runtime: Runtime) {
        current.withLock { $0 = runtime }
        runtime.takeEffect()
    }

    /// The daemon's own checks, and the applications' components as `<app>` and `<app>/<check>`.
    func healthReport() -> HealthReport {
        let runtime = self.runtime
        var checks = runtime.monitor.latestReport.checks
        for record in runtime.apps.healthRecords() where checks[record.name] == nil { checks[record.name] = record }
        return HealthReport(checks: checks)
    }

    /// The daemon's own checks: what `/livez` reads, without the applications' thousands of components.
    func ownReport() -> HealthReport {
        runtime.monitor.latestReport
    }

    func observedValue(of check: String) -> (value: Double, unit: String)? {
        runtime.observations.value(of: check)
    }
}
