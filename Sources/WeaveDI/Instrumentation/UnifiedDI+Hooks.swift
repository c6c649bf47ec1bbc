/// Upstream WeaveDI's static hooks, as a facade on `Container.live`: its settings and its
/// `Instrumentation`. Other containers have their own (`Container.instrumentation`).
extension UnifiedDI {
    /// `Container.live`'s slow-resolution threshold (default 10 ms): resolves slower than this are
    /// reported to `onSlowResolution` handlers and logged at warning level.
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

    /// Calls `handler` with the service name and the duration in seconds of every resolve of
    /// `Container.live` (and its children) slower than `slowResolutionThreshold` (a `TimeInterval`,
    /// which is `Double`). Handlers run on a delivery task, never on the resolving thread.
    @discardableResult
    public static func onSlowResolution(_ handler: @escaping @Sendable (String, Double) -> Void) -> HookToken {
        Container.live.instrumentation.onSlowResolution(handler)
    }

    /// The same, with why it was slow: the chain of factory runs, their totals and self times
    /// (`SlowResolution`).
    @discardableResult
    public static func onSlowResolution(_ handler: @escaping @Sendable (SlowResolution) -> Void) -> HookToken {
        Container.live.instrumentation.onSlowResolution(handler)
    }

    /// Calls `handler` with the service name and the `ResolutionError` of `Container.live`'s failed
    /// resolves: an unregistered type through the optional APIs (`resolve`, `@Inject`), a cycle, a
    /// factory that throws, and an argument mismatch.
    @discardableResult
    public static func onResolutionError(_ handler: @escaping @Sendable (String, Error) -> Void) -> HookToken {
        Container.live.instrumentation.onResolutionError(handler)
    }

    /// Calls `handler` after `Container.live` dropped its `.cached` instances for memory pressure.
    /// Watching is started by whoever owns the process (`MemoryPressureMonitor` in
    /// WeaveMemoryPressure, which `AppEndpoint` starts), not by this call.
    @discardableResult
    public static func onMemoryPressure(_ handler: @escaping @Sendable () -> Void) -> HookToken {
        Container.live.instrumentation.onMemoryPressure(handler)
    }

    /// Calls `handler` with `Container.live`'s startup tree when its startup ends.
    @discardableResult
    public static func onStartup(_ handler: @escaping @Sendable (StartupTree) -> Void) -> HookToken {
        Container.live.instrumentation.onStartup(handler)
    }

    /// Ends `Container.live`'s startup (`Container.endStartup()`); an `AppEndpoint` does it when ready.
    @discardableResult
    public static func endStartup() -> StartupTree? {
        Container.live.endStartup()
    }

    /// Waits until every hook event of `Container.live` reported so far has reached its handlers.
    public static func flushHooks() async {
        await Container.live.instrumentation.flush()
    }
}
