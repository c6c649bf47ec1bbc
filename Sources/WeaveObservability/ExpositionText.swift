public import WeavePrometheus
import WeaveSupport

/// The families of another registry's text exposition, such as swift-prometheus's
/// `PrometheusCollectorRegistry` (`emit(into:)`), so an application's own metrics are served beside
/// its container's from one `/metrics`. Families named in `skipping` are left out: their home is
/// another collector, and a second copy (swift-metrics timers and counters that `MetricsBridge`
/// forwarded into the same registry, say) would repeat a family, which Prometheus rejects.
///
/// swift-metrics gives no help text, and a family without one fails `promtool check metrics`: `help`
/// supplies them by family name (without `_total`); a family with neither gets a generic one.
///
/// Text the parser rejects is left out whole; `lastFailure` says why.
public struct ExpositionText: MetricCollector {
    private let render: @Sendable () -> [UInt8]
    private let skipping: Set<String>
    private let help: [String: String]
    private let failure = Locked<ExpositionParser.Failure?>(nil)

    /// `render` returns the registry's exposition (text 0.0.4 or OpenMetrics) at each scrape.
    public init(skipping: Set<String> = ContainerMetrics.familyNames.union(HealthMetrics.familyNames),
                help: [String: String] = [:], render: @escaping @Sendable () -> [UInt8]) {
        self.render = render
        self.skipping = skipping
        self.help = help
    }

    /// Why the last render was left out, or nil when it was read.
    public var lastFailure: ExpositionParser.Failure? { failure.withLock { $0 } }

    public func collect() async -> [MetricFamily] {
        do {
            let families = try ExpositionParser.parse(render())
            failure.withLock { $0 = nil }
            return families.filter { !skipping.contains($0.name) }.map { family in
                var family = family
                if let text = help[family.name] {
                    family.help = text
                } else if family.help.isEmpty {
                    family.help = "\(family.name), as the application's own metrics registry exports it (it gave no help text)."
                }
                return family
            }
        } catch {
            failure.withLock { $0 = error }
            return []
        }
    }
}
