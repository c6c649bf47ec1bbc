/// How a check is run.
public struct HealthCheckSettings: Sendable, Equatable {
    /// Time from one run's start to the next by `HealthMonitor.run()` (from its end when a run takes longer).
    public var interval: Duration
    /// A run that takes longer is unhealthy with `HealthCheckError.timedOut`.
    public var timeout: Duration
    /// Consecutive failures before the status turns unhealthy (flap damping).
    public var failuresBeforeUnhealthy: Int
    /// Consecutive successes before an unhealthy or degraded status turns healthy again.
    public var successesBeforeHealthy: Int
    /// Groups the check belongs to, such as `live` and `ready`.
    public var groups: Set<String>

    public init(interval: Duration = .seconds(10), timeout: Duration = .seconds(5), failuresBeforeUnhealthy: Int = 1,
                successesBeforeHealthy: Int = 1, groups: Set<String> = []) {
        self.interval = interval
        self.timeout = timeout
        self.failuresBeforeUnhealthy = max(1, failuresBeforeUnhealthy)
        self.successesBeforeHealthy = max(1, successesBeforeHealthy)
        self.groups = groups
    }

    /// The liveness group.
    public static let live = "live"
    /// The readiness group.
    public static let ready = "ready"
    /// Components of another application that a server aggregates (weave-healthd's `<app>/<check>`):
    /// they always count for readiness and never for liveness.
    public static let application = "application"
}

/// What the monitor keeps for one check.
public struct HealthCheckRecord: Sendable {
    public let name: String
    /// The current (damped) status.
    public let status: HealthStatus
    /// What the last run itself returned, before damping.
    public let lastResult: HealthStatus
    /// When the state last changed, and when the check last ran (seconds since the Unix epoch).
    public let changedAt: Double
    public let checkedAt: Double
    /// When a run last passed (healthy or degraded, before damping), in seconds since the Unix epoch;
    /// nil when no run has passed yet.
    public let lastSuccessAt: Double?
    /// How long the last run took.
    public let lastDuration: Duration
    public let consecutiveFailures: Int
    public let consecutiveSuccesses: Int
    public let groups: Set<String>

    public init(name: String, status: HealthStatus, lastResult: HealthStatus, changedAt: Double, checkedAt: Double,
                lastDuration: Duration, consecutiveFailures: Int, consecutiveSuccesses: Int, groups: Set<String>,
                lastSuccessAt: Double? = nil) {
        self.name = name
        self.status = status
        self.lastResult = lastResult
        self.changedAt = changedAt
        self.checkedAt = checkedAt
        self.lastSuccessAt = lastSuccessAt
        self.lastDuration = lastDuration
        self.consecutiveFailures = consecutiveFailures
        self.consecutiveSuccesses = consecutiveSuccesses
        self.groups = groups
    }
}

/// One round of checks.
public struct HealthReport: Sendable {
    /// Everything kept per check, by name (a registered type's name, or the registration name).
    public let checks: [String: HealthCheckRecord]

    public init(checks: [String: HealthCheckRecord]) {
        self.checks = checks
    }

    /// Each check's current status, by name (derived from `checks`).
    public var statuses: [String: HealthStatus] { checks.mapValues(\.status) }

    /// The worst state of all checks (healthy when there are none).
    public var aggregate: HealthState { aggregate(of: checks.values) }

    /// The worst state of the checks in `group`.
    public func aggregate(group: String) -> HealthState {
        aggregate(of: checks.values.filter { $0.groups.contains(group) })
    }

    private func aggregate(of records: some Sequence<HealthCheckRecord>) -> HealthState {
        records.map(\.status.state).max() ?? .healthy
    }

    /// What a watching `/health` compares (`?index=…`): a digest of each check's name, state, reason
    /// and `changedAt`, so it moves with every transition and reason, and not when a check only runs
    /// again; 16 hex digits. Equal reports have equal indexes, in any process.
    public var index: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 // FNV-1a, 64 bits
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            hash = (hash ^ 0xff) &* 0x100_0000_01b3 // a separator no UTF-8 text contains
        }
        for name in checks.keys.sorted() {
            let record = checks[name]!
            mix(name.utf8)
            mix(record.status.state.rawValue.utf8)
            mix((record.status.reason ?? "").utf8)
            withUnsafeBytes(of: record.changedAt.bitPattern.littleEndian) { mix($0) }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The report with its `index`.
    public var indexed: (report: HealthReport, index: String) { (self, index) }
}

/// A check's state changed.
public struct HealthTransition: Sendable {
    public let name: String
    /// `nil` for the first result of a check.
    public let from: HealthState?
    public let to: HealthStatus
}
