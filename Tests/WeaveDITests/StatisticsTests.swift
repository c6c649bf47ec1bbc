import Glibc
import Synchronization
import Testing
@testable import WeaveDI

private struct Made: Sendable {}
private final class Shared: Sendable {}

@Suite struct StatisticsTests {
    @Test func countsAndHistogramsPerKey() {
        let container = Container()
        container.register(Made.self) { Made() }
        container.register(Shared.self, scope: .singleton) { Shared() }
        for _ in 0..<10 { _ = container.resolve(Made.self) }
        for _ in 0..<1_000 { _ = container.resolve(Shared.self) }
        let statistics = container.statistics()
        let made = statistics["Made"]
        #expect(made?.resolutions == 10)
        #expect(made?.instancesCreated == 10)
        #expect(made?.factoryLatency.count == 10)
        #expect(made?.cachedHitLatency.count == 0)
        let shared = statistics["Shared"]
        #expect(shared?.resolutions == 1_000)
        #expect(shared?.instancesCreated == 1)
        #expect(shared?.factoryLatency.count == 1)
        // One cached hit in 64 per thread is timed; this thread may have counted down elsewhere first.
        let sampled = shared?.cachedHitLatency.count ?? 0
        #expect(sampled >= 999 / UInt64(Container.hitSamplingInterval) - 1 && sampled <= 999 / UInt64(Container.hitSamplingInterval) + 1)
        #expect(shared?.isInstantiated == true)
        #expect(LatencyHistogram.bounds.first == 0x1p-20 && LatencyHistogram.bounds.count == 188)
    }

    /// The snapshot's name order is kept between snapshots and made again whenever a registration
    /// is added, replaced or released.
    @Test func theNameOrderFollowsEveryRegistrationChange() {
        let container = Container()
        for name in ["m", "c", "x"] { container.register(name, Made.self) { Made() } }
        let names = { container.statistics().services.map(\.service) }
        #expect(names() == ["c (Made)", "m (Made)", "x (Made)"])
        #expect(names() == ["c (Made)", "m (Made)", "x (Made)"])
        container.register("a", Made.self) { Made() }
        #expect(names() == ["a (Made)", "c (Made)", "m (Made)", "x (Made)"])
        container.register("a", Made.self, scope: .singleton) { Made() }
        #expect(container.statistics()["a (Made)"]?.scope == .singleton)
        #expect(container.release(Made.self, name: "m"))
        #expect(names() == ["a (Made)", "c (Made)", "x (Made)"])
        container.register(Made.self) { Made() }
        #expect(names() == ["Made", "a (Made)", "c (Made)", "x (Made)"])
    }

    @Test func uninstrumentedContainersCountButDoNotTime() {
        let container = Container(instrumented: false)
        container.register(Made.self) { Made() }
        for _ in 0..<200 { _ = container.resolve(Made.self) }
        let made = container.statistics()["Made"]
        #expect(made?.resolutions == 200)
        #expect(made?.factoryLatency.count == 0)
    }

    @Test func histogramQuantilesAndCumulativeCounts() {
        var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
        counts[1] = 10 // (2^-20 s, 2^(-159/8) s]: (953.7 ns, 1,040 ns]
        let histogram = LatencyHistogram(counts: counts, sumNanos: 10_000)
        #expect(histogram.count == 10)
        #expect(histogram.cumulativeCounts.last == 10)
        #expect(histogram.cumulativeCounts[0] == 0 && histogram.cumulativeCounts[1] == 10)
        let median = histogram.quantile(0.5)!
        #expect(median > 0.95e-6 && median <= 1.04e-6)
        #expect(LatencyHistogram.empty.quantile(0.5) == nil)
        #expect(histogram.sumSeconds == 10e-6)
        #expect(histogram.exportedBucketCounts[0] == 10, "(0, 7.6 µs] holds (0.95 µs, 1.04 µs]")
        #expect(histogram.exportedBucketCounts.count == 12 && histogram.exportedBucketCounts.reduce(0, +) == histogram.count)
    }

    /// The layout: Prometheus's schema-3 bounds 2^(k/8) s from 2^-20 s to 2^(27/8) s, neighbours
    /// 2^(1/8) apart; every whole number of nanoseconds lands in the bucket Prometheus would put it in.
    @Test func theBucketLayoutIsSchema3() {
        let bounds = LatencyBuckets.boundsNanos
        #expect(bounds.count + 1 == LatencyBuckets.count)
        #expect(bounds.first == 953 && bounds.last == 10_374_716_437)
        #expect(LatencyHistogram.bounds.first == 0x1p-20 && LatencyHistogram.bounds[160] == 1 && LatencyHistogram.bounds[152] == 0.5)
        for (offset, bound) in LatencyHistogram.bounds.enumerated() {
            // Prometheus's bound of bucket k (getBound): its table's fraction for k mod 8, times 2^(⌊k/8⌋ + 1).
            let k = LatencyBuckets.firstIndex + offset
            let prometheus = [0.5, 0.5452538663326288, 0.5946035575013605, 0.6484197773255048,
                              0.7071067811865475, 0.7711054127039704, 0.8408964152537144, 0.9170040432046711]
            #expect(bound == Double(sign: .plus, exponent: (k >> 3) + 1, significand: prometheus[k & 7]))
            #expect(abs(bound / Glibc.exp2(Double(k) / 8) - 1) < 1e-15)
        }
        let seconds = LatencyHistogram.bounds
        for (lower, upper) in zip(seconds, seconds.dropFirst()) { #expect(abs(upper / lower - 1.0905077326652577) < 1e-12) }
        // Each exported bound is one of the bounds, so the exported counts are exact.
        #expect(LatencyHistogram.exportedBounds == [0x1p-17, 0x1p-15, 0x1p-13, 0x1p-11, 0x1p-9, 0x1p-7, 0x1p-5, 0x1p-3, 0.5, 2, 8])
        #expect(LatencyHistogram.exportedEnds.map { LatencyHistogram.bounds[$0] } == LatencyHistogram.exportedBounds)
        for (index, bound) in bounds.enumerated() {
            #expect(LatencyBuckets.index(ofNanos: bound) == index)
            #expect(LatencyBuckets.index(ofNanos: bound + 1) == index + 1)
            // The whole nanoseconds at and below the bound are within it, the next one is above it.
            #expect(Double(bound) / 1e9 <= LatencyHistogram.bounds[index] && Double(bound + 1) / 1e9 > LatencyHistogram.bounds[index])
        }
        #expect(LatencyBuckets.index(ofNanos: 0) == 0 && LatencyBuckets.index(ofNanos: .max) == LatencyBuckets.count - 1)
        // The lookup agrees with a search over the bounds, across the range and past it.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100_000 {
            let nanos = UInt64.random(in: 0...(1 << UInt64.random(in: 0...40, using: &generator)), using: &generator)
            let searched = bounds.firstIndex { $0 >= nanos } ?? bounds.count
            #expect(LatencyBuckets.index(ofNanos: nanos) == searched, "\(nanos) ns")
        }
        #expect(LatencyBuckets.index(ofNanos: 50_000_000) == 160 - 34, "50 ms is in native bucket -34: (2^(-35/8), 2^(-34/8)] s")
    }

    /// A steady latency anywhere in the range reads back within 4.5 % at p50 and p99 (a factory of
    /// a steady 50.1 ms read 75 ms and 99.5 ms with the 1-5-10 buckets).
    @Test func quantilesOfASteadyLatencyAreWithinTheirBound() {
        var nanos: UInt64 = 1_001
        while nanos < 10_000_000_000 {
            var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
            counts[LatencyBuckets.index(ofNanos: nanos)] = 100
            let histogram = LatencyHistogram(counts: counts, sumNanos: nanos * 100)
            let truth = Double(nanos) / 1e9
            for q in [0.5, 0.99] {
                let estimate = histogram.quantile(q)!
                #expect(abs(estimate / truth - 1) < 0.045, "\(nanos) ns at \(q): \(estimate)")
            }
            nanos = nanos * 107 / 100
        }
    }

    /// Cached hits are timed one in 64 and weighted back (#65): one 50 ms factory run and 19,999
    /// hits of 16 µs (312 of them timed) read p99 < 1 ms and p50 < 100 µs, where the unweighted
    /// sample (1 run of 313) read 50 ms for both; the weighted count is the resolves, 20,000.
    @Test func timedHitsAreWeightedBackToTheHitsTheyStandFor() throws {
        func histogram(_ nanos: UInt64, _ count: UInt64) -> LatencyHistogram {
            var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
            counts[LatencyBuckets.index(ofNanos: nanos)] = count
            return LatencyHistogram(counts: counts, sumNanos: nanos * count)
        }
        let service = ServiceStatistics(service: "Report", scope: .singleton, resolutions: 20_000, instancesCreated: 1, errors: [:],
                                        slowResolutions: 1, cachedHitLatency: histogram(16_000, 312),
                                        factoryLatency: histogram(50_000_000, 1), isInstantiated: true)
        let latency = service.latency
        #expect(latency.count == 20_000)
        #expect(try #require(latency.quantile(0.99)) < 0.001)
        #expect(try #require(latency.quantile(0.5)) < 0.0001)
        #expect(abs(latency.sumSeconds - (0.05 + 19_999 * 16e-6)) < 1e-6)
        // The case: one 109 ms run and 280 hits (4 timed) read p99 109 ms unweighted.
        let reported = ServiceStatistics(service: "Report", scope: .singleton, resolutions: 281, instancesCreated: 1, errors: [:],
                                         slowResolutions: 1, cachedHitLatency: histogram(16_000, 4),
                                         factoryLatency: histogram(109_000_000, 1), isInstantiated: true)
        #expect(try #require(reported.factoryLatency.merged(with: reported.cachedHitLatency).quantile(0.99)) > 0.1)
        #expect(try #require(reported.latency.quantile(0.99)) < 0.001)
        // The weights add up exactly whatever the shape, and a histogram keeps its order.
        let mixed = histogram(2_000, 5).merged(with: histogram(40_000, 3)).merged(with: histogram(900_000, 1))
        let weighted = mixed.weighted(to: 1_000)
        #expect(weighted.count == 1_000 && weighted.bucketCounts.reduce(0, +) == 1_000)
        #expect(weighted.occupied.map(\.index) == mixed.occupied.map(\.index))
        #expect(weighted.occupied.map(\.count) == [555, 333, 112])
        // Nothing timed beyond the factory runs (an uninstrumented container, or few hits): as it was.
        let few = ServiceStatistics(service: "Few", scope: .singleton, resolutions: 10, instancesCreated: 1, errors: [:],
                                    slowResolutions: 0, cachedHitLatency: .empty, factoryLatency: histogram(50_000_000, 1),
                                    isInstantiated: true)
        #expect(few.latency == few.factoryLatency)
    }

    /// Through a real container: the summary's count is every resolve, both paths.
    @Test func theSummaryCountsEveryResolve() throws {
        let container = Container()
        container.register(Settings.self, scope: .singleton) { Settings(name: "weighted") }
        for _ in 0..<20_000 { _ = container.resolve(Settings.self) }
        let settings = try #require(container.statistics()["Settings"])
        #expect(settings.cachedHitLatency.count > 0 && settings.cachedHitLatency.count < 19_999)
        #expect(settings.latency.count == 20_000)
    }

    /// Hits counted on threads whose shards saw nothing else of the key (no factory run, no timed
    /// hit: those shards read one word of it) add up with the shard that ran the factory.
    @Test func hitsOnlyCountedInOtherShardsAddUp() async {
        let container = Container()
        container.register(Shared.self, scope: .singleton) { Shared() }
        _ = container.resolve(Shared.self)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for _ in 0..<10 { _ = container.resolve(Shared.self) } }
            }
        }
        let shared = container.statistics()["Shared"]
        #expect(shared?.resolutions == 41 && shared?.instancesCreated == 1 && shared?.factoryLatency.count == 1)
    }

    @Test func exactCountsUnderAnEightTaskStress() async {
        let container = Container()
        container.register(Made.self) { Made() }
        container.register(Shared.self, scope: .singleton) { Shared() }
        let perTask = 20_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for step in 0..<perTask {
                        if (step + task) % 4 == 0 {
                            _ = container.resolve(Made.self)
                        } else if step % 1_000 == 999 {
                            _ = container.resolve(Settings.self) // not registered: an error
                        } else {
                            _ = container.resolve(Shared.self)
                        }
                    }
                }
            }
        }
        let expectedMade = (0..<8).reduce(0) { total, task in
            total + (0..<perTask).filter { ($0 + task) % 4 == 0 }.count
        }
        let expectedMisses = (0..<8).reduce(0) { total, task in
            total + (0..<perTask).filter { ($0 + task) % 4 != 0 && $0 % 1_000 == 999 }.count
        }
        let statistics = container.statistics()
        #expect(statistics["Made"]?.resolutions == UInt64(expectedMade))
        #expect(statistics["Made"]?.instancesCreated == UInt64(expectedMade))
        #expect(statistics["Made"]?.factoryLatency.count == UInt64(expectedMade))
        #expect(statistics["Shared"]?.resolutions == UInt64(8 * perTask - expectedMade - expectedMisses))
        #expect(statistics["Shared"]?.instancesCreated == 1)
        #expect(statistics["Settings"]?.errors[.notRegistered] == UInt64(expectedMisses))
    }
}

private struct Refunds: Sendable {}
private struct GatewayDown: Error {}
private final class Calls: Sendable { let count = Mutex(0) }

/// A resolve is a success; an attempt that failed is an error only, whichever scope, API and path.
@Suite struct ErrorCountTests {
    @Test(arguments: [Scope.transient, .singleton, .cached])
    func attemptsThatAllFailAreErrorsAndNoResolve(scope: Scope) async {
        for instrumented in [true, false] {
            let container = Container(instrumented: instrumented)
            container.register(Refunds.self, scope: scope) { () throws -> Refunds in throw GatewayDown() }
            for _ in 0..<7 { #expect(container.resolve(Refunds.self) == nil) }
            for _ in 0..<3 { #expect(throws: ResolutionError.self) { try container.resolveThrows(Refunds.self) } }
            let statistics = container.statistics()["Refunds"]
            #expect(statistics?.resolutions == 0)
            #expect(statistics?.errors[.factoryFailed] == 10)
        }
    }

    @Test func asyncAttemptsThatFailAreErrorsAndNoResolve() async {
        let container = Container()
        container.register(Refunds.self, scope: .singleton) { () async throws -> Refunds in throw GatewayDown() }
        for _ in 0..<4 { _ = try? await container.resolveAsync(Refunds.self) }
        #expect(container.statistics()["Refunds"]?.resolutions == 0)
        #expect(container.statistics()["Refunds"]?.errorCount == 4)
    }

    @Test func halfFailingGivesHalfTheAttemptsAsErrors() {
        let container = Container()
        let calls = Calls()
        container.register(Refunds.self) { () throws -> Refunds in
            let call = calls.count.withLock { $0 += 1; return $0 }
            if call.isMultiple(of: 2) { throw GatewayDown() }
            return Refunds()
        }
        for _ in 0..<10 { _ = container.resolve(Refunds.self) }
        let statistics = container.statistics()["Refunds"]
        #expect(statistics?.resolutions == 5 && statistics?.errorCount == 5)
    }

    @Test func unifiedDIRegistersThrowingFactoriesSyncAndAsync() async {
        let container = Container()
        await withContainer(container) {
            UnifiedDI.register(Refunds.self) { () throws -> Refunds in throw GatewayDown() }
            #expect(throws: ResolutionError.self) { try UnifiedDI.resolveThrows(Refunds.self) }
            UnifiedDI.register(Shared.self, scope: .singleton) { () async throws -> Shared in
                try await Task.sleep(for: .milliseconds(1))
                return Shared()
            }
            let first = try? await UnifiedDI.resolveAsync(Shared.self)
            let second = try? await UnifiedDI.resolveAsync(Shared.self)
            #expect(first != nil && first === second)
        }
        #expect(container.statistics()["Refunds"]?.errors[.factoryFailed] == 1)
    }
}
