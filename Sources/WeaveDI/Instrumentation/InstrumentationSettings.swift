/// How one container reports what it measures: the slow-resolution threshold, and the rate limit of
/// its slow-resolution and resolution-error log records. Each container has its own, so changing
/// one (a daemon's reload builds a new container) changes nothing in another; `UnifiedDI`'s statics
/// are the settings of `Container.live`.
public struct InstrumentationSettings: Sendable, Equatable {
    /// Resolves (factory included) slower than this are counted, reported to `onSlowResolution`
    /// handlers and logged at warning level.
    public var slowResolutionThreshold: Duration
    /// How many slow-resolution and resolution-error records about one service are logged per window;
    /// the rest are summarised. Hook handlers still see every event.
    public var logRateLimit: LogRateLimit

    public init(slowResolutionThreshold: Duration = .milliseconds(10), logRateLimit: LogRateLimit = .default) {
        self.slowResolutionThreshold = slowResolutionThreshold
        self.logRateLimit = logRateLimit
    }

    /// 10 ms, and 5 records per service and event every 10 s.
    public static let `default` = InstrumentationSettings()
}
