import Logging

/// How many records of one event about one service are logged per window; the rest are counted
/// and summarised in one record when the window ends, so a hot loop cannot flood the log.
public struct LogRateLimit: Sendable, Equatable {
    /// Records logged per window and key.
    public var burst: Int
    public var window: Duration

    public init(burst: Int, window: Duration) {
        precondition(burst >= 1 && window > .zero, "a rate limit needs a burst ≥ 1 and a positive window")
        self.burst = burst
        self.window = window
    }

    /// 5 records per service and event every 10 s.
    public static let `default` = LogRateLimit(burst: 5, window: .seconds(10))
}

/// Applies `LogRateLimit` to repeated records, keyed by event and service (or any key: the daemon
/// keys the applications' events by application and kind).
public final class LogThrottle: Sendable {
    private struct Window {
        var start: Duration
        var logged: Int
        var suppressed: Int

        /// Still counting: inside its time, or waiting for its summary to be written.
        func isOpen(at now: Duration, _ limit: LogRateLimit) -> Bool {
            now - start < limit.window || suppressed > 0
        }
    }

    private struct State {
        var limit: LogRateLimit
        var windows: [String: Window] = [:]
    }

    private let state: Locked<State>
    private let clock: ElapsedClock

    /// Windows of `ContinuousClock` time.
    public convenience init(limit: LogRateLimit) {
        self.init(limit: limit, clock: ContinuousClock())
    }

    /// Windows of `clock`'s time (a test's clock, moved by the test).
    public init<C: Clock>(limit: LogRateLimit, clock: C) where C.Duration == Duration {
        state = Locked(State(limit: limit))
        self.clock = ElapsedClock(clock)
    }

    public var limit: LogRateLimit {
        get { state.withLock { $0.limit } }
        set { state.withLock { $0.limit = newValue } }
    }

    /// Whether a record for `key` may be logged now. The first suppressed record of a window
    /// schedules `summary(suppressed, window)` for the window's end.
    public func admit(_ key: String, summary: @escaping @Sendable (Int, Duration) -> Void) -> Bool {
        let now = clock.now
        let decision = state.withLock { state -> (admitted: Bool, closeAt: Duration?, window: Duration) in
            let limit = state.limit
            if state.windows.count > 1_024 { state.windows = state.windows.filter { $0.value.isOpen(at: now, limit) } }
            var window = state.windows[key].flatMap { $0.isOpen(at: now, limit) ? $0 : nil }
                ?? Window(start: now, logged: 0, suppressed: 0)
            defer { state.windows[key] = window }
            if window.logged < limit.burst {
                window.logged += 1
                return (true, nil, limit.window)
            }
            window.suppressed += 1
            return (false, window.suppressed == 1 ? window.start + limit.window : nil, limit.window)
        }
        if let closeAt = decision.closeAt {
            // Holds the throttle until the window ends: a container released meanwhile (a reload
            // replaces the daemon's) still says what it suppressed, then lets it go.
            Task.detached { [self] in
                try? await clock.sleep(until: closeAt)
                let suppressed = close(key)
                if suppressed > 0 { summary(suppressed, decision.window) }
            }
        }
        return decision.admitted
    }

    /// Ends `key`'s window and returns how many records it suppressed.
    private func close(_ key: String) -> Int {
        state.withLock { $0.windows.removeValue(forKey: key)?.suppressed ?? 0 }
    }
}
