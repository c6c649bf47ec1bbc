/// A service that can say whether it works. `HealthMonitor` asks every registered service that
/// conforms, plus the checks registered with it by name.
public protocol HealthCheckable: Sendable {
    func healthCheck() async -> HealthStatus
}

/// What a health check found.
public enum HealthStatus: Sendable, CustomStringConvertible {
    case healthy
    /// Working, but not as it should (a slow dependency, a disk filling up).
    case degraded(reason: String)
    /// Not working.
    case unhealthy(error: any Error)

    /// The status without its payload, ordered healthy < degraded < unhealthy.
    public var state: HealthState {
        switch self {
        case .healthy: return .healthy
        case .degraded: return .degraded
        case .unhealthy: return .unhealthy
        }
    }

    /// The reason or error, if any (for logs; public bodies withhold it by default).
    public var reason: String? {
        switch self {
        case .healthy: return nil
        case .degraded(let reason): return reason
        case .unhealthy(let error): return "\(error)"
        }
    }

    public var description: String {
        guard let reason else { return state.rawValue }
        return "\(state.rawValue): \(reason)"
    }
}

/// A health status without its payload. Ordered: the worst wins an aggregation.
public enum HealthState: String, Sendable, Comparable, CaseIterable {
    case healthy, degraded, unhealthy

    private var rank: Int {
        switch self {
        case .healthy: return 0
        case .degraded: return 1
        case .unhealthy: return 2
        }
    }

    public static func < (lhs: HealthState, rhs: HealthState) -> Bool { lhs.rank < rhs.rank }

    /// The state as the IETF health-check draft (application/health+json) spells it: pass, warn, fail.
    public var ietfStatus: String {
        switch self {
        case .healthy: return "pass"
        case .degraded: return "warn"
        case .unhealthy: return "fail"
        }
    }

    /// The state a health+json `status` names, or nil for another word.
    public init?(ietfStatus: String) {
        guard let state = HealthState.allCases.first(where: { $0.ietfStatus == ietfStatus }) else { return nil }
        self = state
    }
}

/// Why a check is unhealthy when it did not answer itself.
public enum HealthCheckError: Error, CustomStringConvertible {
    /// The check did not finish within its timeout.
    case timedOut(after: Duration)

    public var description: String {
        switch self {
        case .timedOut(let timeout): return "timed out after \(timeout)"
        }
    }
}
