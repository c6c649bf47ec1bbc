import Testing
@testable import WeaveDI
import WeaveObservability
@testable import WeavePrometheus

/// The cardinality control of `ContainerMetrics` (`ResolveBuckets`), on statistics made by hand so
/// which dependency is slowest is known exactly.
@Suite struct ContainerMetricsTests {
    /// 100 singletons, each with factory runs of mean latency `index` µs and some timed cached hits.
    static let statistics = ContainerStatistics(
        services: (1...100).map { index in
            var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
            counts[index % LatencyBuckets.count] = 2
            return ServiceStatistics(
                service: "Service\(index)", scope: .singleton, resolutions: 10, instancesCreated: 1, errors: [:], slowResolutions: 0,
                cachedHitLatency: LatencyHistogram(counts: counts, sumNanos: 200),
                factoryLatency: LatencyHistogram(counts: counts, sumNanos: UInt64(index) * 2_000), isInstantiated: true)
        },
        cachedEvictions: 0, memoryPressureEvents: 0)

    static func samples(_ buckets: ResolveBuckets) -> [Substring] {
        let text = String(decoding: Exposition.render(ContainerMetrics.families(statistics, buckets: buckets), format: .prometheusText),
                          as: UTF8.self)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }
    }

    static func bucketed(_ samples: [Substring]) -> Set<String> {
        Set(samples.filter { $0.hasPrefix("weave_resolve_duration_seconds_bucket") && !$0.contains("le=\"+Inf\"") }.map {
            String($0.split(separator: "\"")[1])
        })
    }

    @Test func seriesPerDependencyWithAndWithoutBuckets() {
        #expect(LatencyHistogram.exportedBounds.count == 11)
        let bucketed = 11 + 3 // the factory path's exported buckets, +Inf, _sum, _count
        // 3 counters and a summary (2 quantiles, _sum, _count) per dependency; the factory path with
        // or without its buckets, the cached-hit path with +Inf, _sum and _count; 4 registration
        // gauges, evictions, pressure events.
        #expect(Self.samples(.all).count == 100 * (3 + 4 + bucketed + 3) + 6)
        #expect(Self.samples(.none).count == 100 * (3 + 4 + 3 + 3) + 6)
        #expect(Self.samples(.slowest(10)).count == 10 * (3 + 4 + bucketed + 3) + 90 * (3 + 4 + 3 + 3) + 6)
    }

    /// The default an operator gets: one application of 100 services (both paths resolved) is at
    /// most 1,500 series, in either text format, with at most 12 buckets per dependency.
    @Test func theDefaultStaysUnder1500SeriesFor100Services() {
        #expect(ResolveBuckets.default == .slowest(10))
        #expect(Self.samples(.default).count == 1_416)
        let openMetrics = String(decoding: Exposition.render(ContainerMetrics.families(Self.statistics), format: .openMetrics),
                                 as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(openMetrics.count == 1_416)
        let buckets = Self.samples(.default).filter { $0.hasPrefix("weave_resolve_duration_seconds_bucket{dependency=\"Service100\",path=\"factory\",") }
        #expect(buckets.count == 12)
    }

    /// A dependency whose factory can throw has its factory_failed counter at 0 from its
    /// registration, so that Prometheus sees the first failures of its upstream as an increase; one
    /// whose factory cannot throw has none until an error happens, and a key that is not
    /// registered has the one kind it failed with.
    @Test func factoryFailuresStartAtZeroFromRegistration() {
        struct Down: Error {}
        let container = Container()
        container.register(Int.self) { 1 }
        container.register(Double.self, throwingFactory: { throw Down() })
        container.register(Float.self) { () async throws -> Float in 1 }
        _ = try? container.resolveThrows(String.self)
        let text = String(decoding: Exposition.render(ContainerMetrics.families(container.statistics()), format: .prometheusText),
                          as: UTF8.self)
        let errors = text.split(separator: "\n").filter { $0.hasPrefix("weave_resolution_errors_total") }
        #expect(errors == [
            #"weave_resolution_errors_total{dependency="Double",kind="factory_failed"} 0"#,
            #"weave_resolution_errors_total{dependency="Float",kind="factory_failed"} 0"#,
            #"weave_resolution_errors_total{dependency="String",kind="not_registered"} 1"#,
        ])
        _ = try? container.resolveThrows(Double.self)
        let after = ContainerMetrics.families(container.statistics()).first { $0.name == "weave_resolution_errors" }
        #expect(after?.samples.first { $0.labels.contains { $0 == ("dependency", "Double") } }?.value == 1)
    }

    @Test func withoutBucketsCountsAndSumsStay() {
        let samples = Self.samples(.none)
        #expect(Self.bucketed(samples).isEmpty)
        #expect(samples.contains("weave_resolve_duration_seconds_bucket{dependency=\"Service7\",path=\"factory\",le=\"+Inf\"} 2"))
        #expect(samples.contains("weave_resolve_duration_seconds_count{dependency=\"Service7\",path=\"factory\"} 2"))
        #expect(samples.contains("weave_resolve_duration_seconds_sum{dependency=\"Service7\",path=\"factory\"} 1.4e-05"))
        #expect(samples.contains("weave_resolve_duration_seconds_count{dependency=\"Service7\",path=\"cached_hit\"} 2"))
    }

    @Test func theSlowestKeepTheirBuckets() {
        #expect(Self.bucketed(Self.samples(.slowest(3))) == ["Service100", "Service99", "Service98"])
        #expect(Self.bucketed(Self.samples(.slowest(0))).isEmpty)
        #expect(Self.bucketed(Self.samples(.slowest(Int.max))).count == 100)
        #expect(Self.bucketed(Self.samples(.all)).count == 100)
    }

    @Test func bucketSettingsParse() {
        #expect(ResolveBuckets("all") == .all)
        #expect(ResolveBuckets("none") == ResolveBuckets.none)
        #expect(ResolveBuckets("20") == .slowest(20))
        #expect(ResolveBuckets("-1") == nil)
        #expect(ResolveBuckets("99999999999999999999999") == nil)
        #expect(ResolveBuckets("some") == nil)
    }

    /// Resolves counted per thread (each in its own shard) add up in `/metrics` exactly: the
    /// resolve count, and for a transient the factory histogram's count and `+Inf` bucket.
    @Test func resolvesOnManyThreadsAddUpInTheExposition() async {
        final class Made: Sendable {}
        let container = Container()
        container.register(Made.self) { Made() }
        container.register("limit", Int.self, scope: .singleton) { 5 }
        let tasks = 4
        let each = 25_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<each {
                        _ = container.resolve(Made.self)
                        _ = container.resolve("limit", Int.self)
                    }
                }
            }
        }
        let total = tasks * each
        let rendered = String(decoding: Exposition.render(ContainerMetrics.families(container.statistics()), format: .prometheusText),
                              as: UTF8.self)
        #expect(rendered.contains("weave_resolutions_total{dependency=\"Made\"} \(total)\n"))
        #expect(rendered.contains("weave_resolutions_total{dependency=\"limit (Int)\"} \(total)\n"))
        #expect(rendered.contains("weave_instances_created_total{dependency=\"Made\"} \(total)\n"))
        #expect(rendered.contains("weave_resolve_duration_seconds_count{dependency=\"Made\",path=\"factory\"} \(total)\n"))
        #expect(rendered.contains("weave_resolve_duration_seconds_bucket{dependency=\"Made\",path=\"factory\",le=\"+Inf\"} \(total)\n"))
    }

    @Test func containerFamiliesCarryStatistics() {
        let container = Container()
        container.register("db", Int.self) { 1 }
        _ = container.resolve("db", Int.self)
        let rendered = String(decoding: Exposition.render(ContainerMetrics.families(container.statistics()), format: .prometheusText),
                              as: UTF8.self)
        #expect(rendered.contains("weave_resolutions_total{dependency=\"db (Int)\"} 1\n"))
        #expect(rendered.contains("weave_resolve_duration_seconds_bucket{dependency=\"db (Int)\",path=\"factory\",le=\"+Inf\"} 1\n"))
        #expect(rendered.contains("weave_resolve_duration_seconds_count{dependency=\"db (Int)\",path=\"factory\"} 1\n"))
        #expect(rendered.contains("weave_registrations{scope=\"transient\"} 1\n"))
    }

    @Test func expositionTextSkipsTheFamiliesItDoesNotOwn() async {
        let text = "# HELP weave_resolutions_total Copy.\n# TYPE weave_resolutions_total counter\nweave_resolutions_total{service=\"X\"} 1\n"
            + "# HELP orders_requests_total Requests.\n# TYPE orders_requests_total counter\norders_requests_total 7\n"
        let collector = ExpositionText { Array(text.utf8) }
        let families = await collector.collect()
        #expect(families.map(\.name) == ["orders_requests"])
        #expect(families[0].help == "Requests.")
        let helpless = ExpositionText(help: ["b": "B."]) { Array("# TYPE a gauge\na 1\n# TYPE b gauge\nb 2\n".utf8) }
        #expect(await helpless.collect().map(\.help) == ["a, as the application's own metrics registry exports it (it gave no help text).", "B."])
        #expect(collector.lastFailure == nil)
        let broken = ExpositionText { Array("orders 1\n".utf8) }
        #expect(await broken.collect().isEmpty)
        #expect(broken.lastFailure?.line == 1)
    }

    /// The native histogram is the recorded buckets themselves: 50 ms factory runs are in native
    /// bucket -34, (2^(-35/8), 2^(-34/8)] s = (48.2 ms, 52.6 ms]; sub-microsecond ones in the zero
    /// bucket; one of 20 s in none (its count and sum only); and every series has one, bucketed or not.
    @Test func nativeHistogramsAreTheRecordedBuckets() throws {
        var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
        counts[LatencyBuckets.index(ofNanos: 50_000_000)] = 3
        counts[LatencyBuckets.index(ofNanos: 500)] = 2
        counts[LatencyBuckets.index(ofNanos: 20_000_000_000)] = 1
        let histogram = LatencyHistogram(counts: counts, sumNanos: 3 * 50_000_000 + 2 * 500 + 20_000_000_000)
        let service = ServiceStatistics(service: "Report", scope: .transient, resolutions: 6, instancesCreated: 6, errors: [:],
                                        slowResolutions: 0, cachedHitLatency: .empty, factoryLatency: histogram, isInstantiated: false)
        let families = ContainerMetrics.families(ContainerStatistics(services: [service], cachedEvictions: 0, memoryPressureEvents: 0),
                                                 buckets: .none)
        let series = try #require(families.first { $0.name == "weave_resolve_duration_seconds" }?.histograms.first)
        let native = try #require(series.native)
        #expect(native.schema == 3 && native.zeroThreshold == 0x1p-20 && native.zeroCount == 2)
        #expect(native.positive == [.init(index: -34, count: 3)])
        #expect(series.count == 6 && native.problem(count: series.count) == nil)
        #expect(series.bucketLabels == ["+Inf"], "without classic buckets")
    }
}
