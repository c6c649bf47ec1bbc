import WeaveDI
import WeaveHealth
import WeaveHealthServer

/// The endpoints' view of the daemon: whatever runtime is current (a reload swaps it).
final class DaemonSource: HealthSource {
    private let current: Locked<Runtime>

    init(_ runtime: Runtime) {
        current = Locked(runtime)
    }

    var runtime: Runtime { current.withLock { $0 } }

    func replace(with runtime: Runtime) {
        current.withLock { $0 = runtime }
    }

    func healthReport() async -> HealthReport {
        runtime.monitor.latestReport
    }

    func observedValue(of check: String) async -> (value: Double, unit: String)? {
        runtime.observations.value(of: check)
    }
}
