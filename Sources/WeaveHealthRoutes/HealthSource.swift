import Synchronization
public import WeaveHealth
import WeavePrometheus

/// What the endpoints read: the current health, the metric families, and the server's own state.
/// Every read is of a snapshot and returns at once: the endpoints never run checks themselves, and
/// the probes (`/livez`, `/readyz`) are answered on the server's event loop with what these return.
public protocol HealthSource: Sendable {
    /// The latest health report: the server's own checks and whatever it aggregates.
    func healthReport() -> HealthReport
    /// The server's own checks only, which liveness reads (by default the whole report).
    func ownReport() -> HealthReport
    /// A check's observed value and its unit, when the check has one (`/health`'s `observedValue`).
    func observedValue(of check: String) -> (value: Double, unit: String)?
    /// Fired after each change of `healthReport()`'s index, so that `/health?index=…&wait=…` is
    /// answered when the report changes; nil (the default) when there is none: such a `/health` is
    /// answered at once, without `X-Weave-Index`, and its clients poll it.
    var changes: ChangeSignal? { get }
    /// `healthReport()` and its `HealthReport.index`, read together; a source with `changes` keeps
    /// the index it computed once per change (by default it is computed here).
    func indexedHealthReport() -> (report: HealthReport, index: String)
}

extension HealthSource {
    public func ownReport() -> HealthReport { healthReport() }
    public func indexedHealthReport() -> (report: HealthReport, index: String) { healthReport().indexed }
    public var changes: ChangeSignal? { nil }
}

/// The daemon's own state, which liveness and readiness read.
public final class ServerLifecycle: Sendable {
    private let started = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Fired when graceful shutdown begins: watching requests are answered then, not held.
    public let stopSignal = ChangeSignal()

    public init() {}

    /// The first health round has run (or startup gave up waiting for it).
    public var isStarted: Bool { started.load(ordering: .acquiring) }
    /// Graceful shutdown has begun: readiness fails from now on.
    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    public func markStarted() { started.store(true, ordering: .releasing) }
    public func markStopping() {
        stopping.store(true, ordering: .releasing)
        stopSignal.signal()
    }
}
