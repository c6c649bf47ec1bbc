import WeaveDI
public import WeavePrometheus

/// The metric families of a container's statistics snapshot (`weave_resolutions_total`, …), as a
/// collector of the container that `statistics` reads at each scrape.
public struct ContainerMetrics: MetricCollector {
    public var name: String { "container" }
    private let statistics: @Sendable () -> ContainerStatistics
    private let buckets: @Sendable () -> ResolveBuckets

    /// `statistics` is called at each scrape: a container's `statistics()`, or the current one's.
    /// `buckets` says which dependencies keep their latency buckets.
    public init(buckets: ResolveBuckets = .default, statistics: @escaping @Sendable () -> ContainerStatistics) {
        self.init(buckets: { buckets }, statistics: statistics)
    }

    /// As above, with the bucket setting read at each scrape (a server whose settings reload).
    public init(buckets: @escaping @Sendable () -> ResolveBuckets, statistics: @escaping @Sendable () -> ContainerStatistics) {
        self.statistics = statistics
        self.buckets = buckets
    }

    public func collect() async -> [MetricFamily] {
        Self.families(statistics(), buckets: buckets())
    }

    /// Families for `statistics`; dependencies are label values (registered keys only, so bounded).
    public static func families(_ statistics: ContainerStatistics, buckets: ResolveBuckets = .default) -> [MetricFamily] {
        let bucketed = Self.bucketed(statistics, buckets)
        var resolutions: [([(String, String)], Double)] = []
        var created: [([(String, String)], Double)] = []
        var slow: [([(String, String)], Double)] = []
        var errors: [([(String, String)], Double)] = []
        var durations: [MetricFamily.HistogramSeries] = []
        var latencies: [MetricFamily.Sample] = []
        var registrations: [String: Int] = [:]
        for service in statistics.services {
            let labels = [("dependency", service.service)]
            if let scope = service.scope {
                registrations[scope.rawValue, default: 0] += 1
                resolutions.append((labels, Double(service.resolutions)))
                created.append((labels, Double(service.instancesCreated)))
                slow.append((labels, Double(service.slowResolutions)))
            }
            for (kind, count) in service.exportedErrors {
                errors.append((labels + [("kind", kind.rawValue)], Double(count)))
            }
            let keepBuckets = bucketed?.contains(service.service) ?? true
            if service.scope != nil {
                durations.append(series(service.factoryLatency, service: service.service, path: "factory", buckets: keepBuckets))
            }
            if service.cachedHitLatency.count > 0 {
                durations.append(series(service.cachedHitLatency, service: service.service, path: "cached_hit", buckets: false))
            }
            let timed = service.latency
            if timed.count > 0 {
                for (label, q) in Self.quantiles {
                    latencies.append(.init(labels: labels + [("quantile", label)], value: timed.quantile(q)!))
                }
                latencies.append(.init(suffix: "_sum", labels: labels, value: timed.sumSeconds))
                latencies.append(.init(suffix: "_count", labels: labels, value: Double(timed.count)))
            }
        }
        return [
            .counter("weave_resolutions", "Resolves of a registered service that succeeded, cached hits and factory runs; a failed attempt counts in weave_resolution_errors_total only.", resolutions),
            .counter("weave_instances_created", "Instances a service's factory made.", created),
            .counter("weave_slow_resolutions", "Resolves slower than the slow-resolution threshold.", slow),
            .counter("weave_resolution_errors", "Failed attempts to resolve, by dependency and error kind (none of them counts in weave_resolutions_total); factory_failed is 0 from registration for a factory that can throw.", errors),
            MetricFamily(name: "weave_resolve_duration_seconds", kind: .histogram,
                         help: "Resolve latency: every factory run (classic buckets 2^-17 to 8 s for the dependencies resolve_buckets keeps); one cached hit in 64 per thread (path=cached_hit, +Inf only). Native histograms of schema 3 in the protobuf exposition.",
                         unit: "seconds", histograms: durations),
            MetricFamily(name: "weave_resolve_latency_seconds", kind: .summary,
                         help: "Resolve latency since start, both paths, the cached hits timed one in 64 weighted back to their count; quantiles from 8 buckets an octave, within 4.5 %.",
                         unit: "seconds", samples: latencies),
            .gauge("weave_registrations", "Registered services, by scope.",
                   Scope.allCases.map { ([("scope", $0.rawValue)], Double(registrations[$0.rawValue] ?? 0)) }),
            .counter("weave_cache_evictions", "Cached instances dropped by eviction or memory pressure.",
                     [([], Double(statistics.cachedEvictions))]),
            .counter("weave_memory_pressure_events", "Memory-pressure notifications the container reacted to.",
                     [([], Double(statistics.memoryPressureEvents))]),
        ]
    }

    private static func series(_ histogram: LatencyHistogram, service: String, path: String, buckets: Bool) -> MetricFamily.HistogramSeries {
        // Without buckets, the `+Inf` bucket alone: it holds every observation.
        let (bounds, counts) = buckets ? (boundLabels, histogram.exportedBucketCounts) : (["+Inf"], [histogram.count])
        return MetricFamily.HistogramSeries(labels: [("dependency", service), ("path", path)], bucketLabels: bounds,
                                            bucketCounts: counts, sum: histogram.sumSeconds, native: native(histogram))
    }

    /// The histogram's own buckets as a native histogram: they are those of schema 3, the first one
    /// its zero bucket. Observations above the last bound (10.4 s) are in no native bucket, but in
    /// its count and sum.
    static func native(_ histogram: LatencyHistogram) -> NativeHistogram {
        var zeroCount: UInt64 = 0
        var positive: [NativeHistogram.Bucket] = []
        positive.reserveCapacity(histogram.occupied.count)
        for bucket in histogram.occupied {
            if bucket.index == 0 {
                zeroCount = bucket.count
            } else if bucket.index < LatencyHistogram.bounds.count {
                positive.append(.init(index: Int32(LatencyBuckets.firstIndex + bucket.index), count: bucket.count))
            }
        }
        return NativeHistogram(schema: Int32(LatencyBuckets.schema), zeroThreshold: LatencyHistogram.bounds[0],
                               zeroCount: zeroCount, positive: positive)
    }

    /// The dependencies that keep their buckets; nil for all of them.
    private static func bucketed(_ statistics: ContainerStatistics, _ buckets: ResolveBuckets) -> Set<String>? {
        switch buckets {
        case .all: return nil
        case .none: return []
        case .slowest(let count):
            let ranked = statistics.services.filter { $0.factoryLatency.count > 0 }.map { service in
                (service.service, service.factoryLatency.sumSeconds / Double(service.factoryLatency.count))
            }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
            return Set(ranked.prefix(count).map(\.0))
        }
    }
}

extension ContainerMetrics {
    /// The names of the families this collector is the home of.
    public static let familyNames: Set<String> = [
        "weave_resolutions", "weave_instances_created", "weave_slow_resolutions", "weave_resolution_errors",
        "weave_resolve_duration_seconds", "weave_resolve_latency_seconds", "weave_registrations",
        "weave_cache_evictions", "weave_memory_pressure_events",
    ]

    /// The quantiles `weave_resolve_latency_seconds` shows, by label.
    static let quantiles: [(String, Double)] = [("0.5", 0.5), ("0.99", 0.99)]

    /// The `le` label of every exported bucket, `+Inf` last, spelled once (`7.62939453125e-06`, `0.0078125`, `8.0`).
    static let boundLabels: [String] = LatencyHistogram.exportedBounds.map { "\($0)" } + ["+Inf"]
}
