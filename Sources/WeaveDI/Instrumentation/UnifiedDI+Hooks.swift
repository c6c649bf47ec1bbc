extension UnifiedDI {
    /// `Container.live`'s slow-resolution threshold (default 10 ms): resolves slower than this are
    /// reported to `onSlowResolution` handlers and logged at warning level. Other containers have
    /// their own (`Container.instrumentationSettings`).
    public static var slowResolutionThreshold: Duration {
        get { Container.live.instrumentationSettings.slowResolutionThreshold }
        set { Container.live.instrumentationSettings.slowResolutionThreshold = newValue }
    }

    /// `Container.live`'s log rate limit (`LogRateLimit.default`: 5 records per service and event per
    /// 10 s); the rest are summarised in one record per window. Hook handlers still see every event.
    public static var logRateLimit: LogRateLimit {
        get { Container.live.instrumentationSettings.logRateLimit }
        set { Container.live.instrumentationSettings.logRateLimit = newValue }
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
