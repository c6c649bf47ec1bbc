import WeaveDI

/// Counts a server's open connections against a cap, keeping a reserve for probes.
///
/// Up to `maximum - reserved` connections are served normally. The last `reserved` are for the
/// probes an orchestrator must get through when the server is crowded (`/livez`, `/readyz`): on
/// them every other path is answered 503 and the connection closes. Beyond `maximum` a new
/// connection is closed at once. So idle or half-open connections can exhaust neither the
/// descriptors the process needs for its checks nor the liveness probe.
public final class ConnectionLimiter: Sendable {
    /// What a new connection may do.
    public enum Admission: Sendable {
        case full
        case probesOnly
        case refused
    }

    public let maximum: Int
    public let reserved: Int
    private let open = Locked(0)

    public init(maximum: Int, reserved: Int) {
        self.maximum = max(maximum, 1)
        self.reserved = min(max(reserved, 0), self.maximum - 1)
    }

    /// The connections open now.
    public var count: Int { open.withLock { $0 } }

    /// Admits a new connection; each admission but `.refused` must be paired with `release()`.
    func admit() -> Admission {
        open.withLock { count in
            guard count < maximum else { return .refused }
            count += 1
            return count > maximum - reserved ? .probesOnly : .full
        }
    }

    func release() {
        open.withLock { $0 -= 1 }
    }
}
