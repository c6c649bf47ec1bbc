import WeaveDI

/// The metric families of a container's statistics snapshot (`weave_resolutions_total`, …), as a
/// collector of the container that `statistics` reads at each scrape.
public struct ContainerMetrics: MetricCollector {
    private let statistics: @Sendable () -> ContainerStatistics

    /// `statistics` is called at each scrape: a container's `statistics()`, or the current one's.
    public init(statistics: @escaping @Sendable () -> ContainerStatistics) {
        self.statistics = statistics
    }

    public func collect() async -> [MetricFamily] {
        Self.families(statistics())
    }

    /// Families for `statistics`; services are label values (registered keys only, so bounded).
    public static func families(_ statistics: ContainerStatistics) -> [MetricFamily] {
        var resolutions: [([(String, String)], Double)] = []
        var created: [([(String, String)], Double)] = []
        var slow: [([(String, String)], Double)] = []
        var errors: [([(String, String)], Double)] = []
        var durations: [MetricFamily.HistogramSeries] = []
        var registrations: [String: Int] = [:]
        for service in statistics.services {
            let labels = [("service", service.service)]
            if let scope = service.scope {
                registrations[scope.rawValue, default: 0] += 1
                resolutions.append((labels, Double(service.resolutions)))
                created.append((labels, Double(service.instancesCreated)))
                slow.append((labels, Double(service.slowResolutions)))
            }
            for kind in ResolutionError.Kind.allCases {
                guard let count = service.errors[kind] else { continue }
                errors.append((labels + [("kind", kind.rawValue)], Double(count)))
            }
            if service.scope != nil {
                durations.append(series(service.factoryLatency, service: service.service, path: "factory"))
            }
            if service.cachedHitLatency.count > 0 {
                durations.append(series(service.cachedHitLatency, service: service.service, path: "cached_hit"))
            }
        }
        return [
            .counter("weave_resolutions", "Resolves of a registered service, cached hits and factory runs.", resolutions),
            .counter("weave_instances_created", "Instances a service's factory made.", created),
            .counter("weave_slow_resolutions", "Resolves slower than the slow-resolution threshold.", slow),
            .counter("weave_resolution_errors", "Failed resolves, by service and error kind.", errors),
            MetricFamily(name: "weave_resolve_duration_seconds", kind: .histogram,
                         help: "Resolve latency: every factory run; one cached hit in 64 per thread (path=cached_hit).",
                         unit: "seconds", histograms: durations),
            .gauge("weave_registrations", "Registered services, by scope.",
                   Scope.allCases.map { ([("scope", $0.rawValue)], Double(registrations[$0.rawValue] ?? 0)) }),
            .counter("weave_cache_evictions", "Cached instances dropped by eviction or memory pressure.",
                     [([], Double(statistics.cachedEvictions))]),
            .counter("weave_memory_pressure_events", "Memory-pressure notifications the container reacted to.",
                     [([], Double(statistics.memoryPressureEvents))]),
        ]
    }

    private static func series(_ histogram: LatencyHistogram, service: String, path: String) -> MetricFamily.HistogramSeries {
        MetricFamily.HistogramSeries(labels: [("service", service), ("path", path)], bucketLabels: boundLabels,
                                     bucketCounts: histogram.bucketCounts, sum: histogram.sumSeconds)
    }
}

extension ContainerMetrics {
    /// The names of the families this collector is the home of.
    public static let familyNames: Set<String> = [
        "weave_resolutions", "weave_instances_created", "weave_slow_resolutions", "weave_resolution_errors",
        "weave_resolve_duration_seconds", "weave_registrations", "weave_cache_evictions", "weave_memory_pressure_events",
    ]

    /// The `le` label of every bucket, `+Inf` last, spelled once (`1e-06`, `0.5`, `10.0`).
    static let boundLabels: [String] = LatencyHistogram.bounds.map { "\($0)" } + ["+Inf"]
}
