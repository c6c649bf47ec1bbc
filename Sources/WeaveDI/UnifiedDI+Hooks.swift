extension UnifiedDI {
    /// Resolves (factory included) slower than this are reported to `onSlowResolution` handlers and
    /// logged at warning level. Default 10 ms. Applies to every container.
    public static var slowResolutionThreshold: Duration {
        get { .nanoseconds(Int64(Hooks.thresholdNanos.load(ordering: .relaxed))) }
        set { Hooks.thresholdNanos.store(UInt64(max(0, newValue.totalNanoseconds)), ordering: .relaxed) }
    }

    /// How many slow-resolution and resolution-error log records about one service are written per
    /// window ( `LogRateLimit.default`: 5 per 10 s); the rest are summarised in one record per window.
    /// Hook handlers still see every event.
    public static var logRateLimit: LogRateLimit {
        get { DILog.throttle.limit }
        set { DILog.throttle.limit = newValue }
    }

    /// Calls `handler` with the service name and the duration in seconds of every resolve slower
    /// than `slowResolutionThreshold` (a `TimeInterval`, which is `Double`). Handlers run on a delivery
    /// task, never on the resolving thread.
    @discardableResult
    public static func onSlowResolution(_ handler: @escaping @Sendable (String, Double) -> Void) -> HookToken {
        Hooks.addSlow(handler)
    }

    /// Calls `handler` with the service name and the `ResolutionError` of: a resolve of an
    /// unregistered type through the optional APIs (`resolve`, `@Inject`), a cycle, a factory that
    /// throws, and an argument mismatch.
    @discardableResult
    public static func onResolutionError(_ handler: @escaping @Sendable (String, Error) -> Void) -> HookToken {
        Hooks.addError(handler)
    }

    /// Calls `handler` on memory pressure, after the `.cached` instances were evicted. Starts
    /// `MemoryPressureMonitor.shared` if it is not running.
    @discardableResult
    public static func onMemoryPressure(_ handler: @escaping @Sendable () -> Void) -> HookToken {
        onMemoryPressureDetails { _ in handler() }
    }

    /// Like `onMemoryPressure(_:)`, with the details: the PSI averages, the source and the evictions.
    @discardableResult
    public static func onMemoryPressureDetails(_ handler: @escaping @Sendable (MemoryPressureEvent) -> Void) -> HookToken {
        let token = Hooks.addPressure(handler)
        MemoryPressureMonitor.shared.start()
        return token
    }

    /// Waits until every hook event reported so far has reached its handlers (for tests and shutdown).
    public static func flushHooks() async {
        await Hooks.flush()
    }
}
