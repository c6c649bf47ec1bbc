import WeaveDI

/// The families of another registry's text exposition, such as swift-prometheus's
/// `PrometheusCollectorRegistry` (`emit(into:)`), so an application's own metrics are served beside
/// its container's from one `/metrics`. Families named in `skipping` are left out: their home is
/// another collector, and a second copy (swift-metrics timers and counters that `MetricsBridge`
/// forwarded into the same registry, say) would repeat a family, which Prometheus rejects.
///
/// Text the parser rejects is left out whole; `lastFailure` says why.
public struct ExpositionText: MetricCollector {
    private let render: @Sendable () -> [UInt8]
    private let skipping: Set<String>
    private let failure = Locked<ExpositionParser.Failure?>(nil)

    /// `render` returns the registry's exposition (text 0.0.4 or OpenMetrics) at each scrape.
    public init(skipping: Set<String> = ContainerMetrics.familyNames.union(HealthMetrics.familyNames),
                render: @escaping @Sendable () -> [UInt8]) {
        self.render = render
        self.skipping = skipping
    }

    /// Why the last render was left out, or nil when it was read.
    public var lastFailure: ExpositionParser.Failure? { failure.withLock { $0 } }

    public func collect() async -> [MetricFamily] {
        do {
            let families = try ExpositionParser.parse(render())
            failure.withLock { $0 = nil }
            return families.filter { !skipping.contains($0.name) }
        } catch {
            failure.withLock { $0 = error }
            return []
        }
    }
}
