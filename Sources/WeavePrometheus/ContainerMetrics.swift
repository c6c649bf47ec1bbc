import WeaveDI

/// The metric families of a container's statistics snapshot.
public enum ContainerMetrics {
    /// Families for `statistics`; services are label values (registered keys only, so bounded).
    public static func families(_ statistics: ContainerStatistics) -> [MetricFamily] {
        var resolutions: [([(String, String)], Double)] = []
        var created: [([(String, String)], Double)] = []
        var slow: [([(String, String)], Double)] = []
        var errors: [([(String, String)], Double)] = []
        var durations: [UInt8] = []
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
                appendHistogram(&durations, service.factoryLatency, service: service.service, path: "factory")
            }
            if service.cachedHitLatency.count > 0 {
                appendHistogram(&durations, service.cachedHitLatency, service: service.service, path: "cached_hit")
            }
        }
        return [
            .counter("weave_resolutions", "Resolves of a registered service, cached hits and factory runs.", resolutions),
            .counter("weave_instances_created", "Instances a service's factory made.", created),
            .counter("weave_slow_resolutions", "Resolves slower than the slow-resolution threshold.", slow),
            .counter("weave_resolution_errors", "Failed resolves, by service and error kind.", errors),
            MetricFamily(name: "weave_resolve_duration_seconds", kind: .histogram,
                         help: "Resolve latency: every factory run; one cached hit in 64 per thread (path=cached_hit).",
                         unit: "seconds", samples: [], renderedSamples: durations),
            .gauge("weave_registrations", "Registered services, by scope.",
                   Scope.allCases.map { ([("scope", $0.rawValue)], Double(registrations[$0.rawValue] ?? 0)) }),
            .counter("weave_cache_evictions", "Cached instances dropped by eviction or memory pressure.",
                     [([], Double(statistics.cachedEvictions))]),
            .counter("weave_memory_pressure_events", "Memory-pressure notifications the container reacted to.",
                     [([], Double(statistics.memoryPressureEvents))]),
        ]
    }

    /// Appends the `_bucket` (cumulative, with +Inf), `_sum` and `_count` lines of one series of
    /// `weave_resolve_duration_seconds`, written straight into the exposition bytes.
    static func appendHistogram(_ out: inout [UInt8], _ histogram: LatencyHistogram, service: String, path: String) {
        var labels = Array("{service=\"".utf8)
        Exposition.appendEscapedLabel(&labels, service)
        labels.append(contentsOf: "\",path=\"\(path)\"".utf8)
        let name = Array("weave_resolve_duration_seconds".utf8)
        for (index, count) in histogram.cumulativeCounts.enumerated() {
            out.append(contentsOf: name)
            out.append(contentsOf: "_bucket".utf8)
            out.append(contentsOf: labels)
            out.append(contentsOf: ",le=\"".utf8)
            out.append(contentsOf: boundLabels[index].utf8)
            out.append(contentsOf: "\"} ".utf8)
            Exposition.appendValue(&out, Double(count))
            out.append(UInt8(ascii: "\n"))
        }
        for (suffix, value) in [("_sum", histogram.sumSeconds), ("_count", Double(histogram.count))] {
            out.append(contentsOf: name)
            out.append(contentsOf: suffix.utf8)
            out.append(contentsOf: labels)
            out.append(contentsOf: "} ".utf8)
            Exposition.appendValue(&out, value)
            out.append(UInt8(ascii: "\n"))
        }
    }
}

extension ContainerMetrics {
    /// The `le` label of every bucket, `+Inf` last, spelled once (`1e-06`, `0.5`, `10.0`).
    static let boundLabels: [String] = LatencyHistogram.bounds.map { "\($0)" } + ["+Inf"]
}
