import Synchronization
import WeaveHealth
import WeavePrometheus

/// What the endpoints read: the current health, the metric families, and the server's own state.
public protocol HealthSource: Sendable {
    /// The latest health report (the endpoints never run checks themselves).
    func healthReport() async -> HealthReport
    /// A check's observed value and its unit, when the check has one (`/health`'s `observedValue`).
    func observedValue(of check: String) async -> (value: Double, unit: String)?
}

/// The daemon's own state, which liveness and readiness read.
public final class ServerLifecycle: Sendable {
    private let started = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)

    public init() {}

    /// The first health round has run (or startup gave up waiting for it).
    public var isStarted: Bool { started.load(ordering: .acquiring) }
    /// Graceful shutdown has begun: readiness fails from now on.
    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    public func markStarted() { started.store(true, ordering: .releasing) }
    public func markStopping() { stopping.store(true, ordering: .releasing) }
}
