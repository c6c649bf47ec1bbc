import CSystemd
import WeaveSupport

/// The service manager's notification protocol (`sd_notify`). Outside systemd (no
/// `$NOTIFY_SOCKET`) every call is a silent no-op.
public struct SystemdNotifier: Sendable {
    public init() {}

    /// Whether a service manager listens (`$NOTIFY_SOCKET` is set).
    public var isActive: Bool { getenv("NOTIFY_SOCKET") != nil }

    public func ready(status: String? = nil) { notify(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? [])) }
    public func status(_ line: String) { notify(["STATUS=\(line)"]) }
    public func stopping() { notify(["STOPPING=1"]) }
    public func watchdog() { notify(["WATCHDOG=1"]) }

    /// `RELOADING=1` with the `MONOTONIC_USEC` systemd ≥ 253 expects with it.
    public func reloading() { notify(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"]) }

    /// Asks for `duration` more time to finish starting (or stopping) before systemd gives up.
    public func extendTimeout(by duration: Duration) {
        notify(["EXTEND_TIMEOUT_USEC=\(duration.totalNanoseconds / 1_000)"])
    }

    /// The watchdog interval systemd set for this process (`$WATCHDOG_USEC` with a matching or
    /// absent `$WATCHDOG_PID`), or nil when the watchdog is off.
    public var watchdogInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds))
    }

    /// Sends `KEY=value` assignments in one datagram.
    public func notify(_ assignments: [String]) {
        guard isActive else { return }
        _ = sd_notify(0, assignments.joined(separator: "\n"))
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
