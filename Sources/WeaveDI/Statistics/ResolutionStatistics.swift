import Synchronization
/// A latency histogram: counts per bucket (upper bounds `LatencyHistogram.bounds`, then one
/// above them all) and the sum. Its buckets are those of a native histogram of schema 3 (`LatencyBuckets`).
public struct LatencyHistogram: Sendable, Equatable {
    /// Upper bounds in seconds, 2^(k/8) from 2^-20 s (0.95 µs) to 2^(27/8) s (10.4 s)
    /// (`LatencyBuckets`); the last bucket, above them, has none.
    public static var bounds: [Double] { LatencyBuckets.boundsSeconds }
    /// The bounds exporters show as classic buckets: powers of 4 from 2^-17 s (7.6 µs) to 2^3 s
    /// (8 s), 11 bounds and 12 buckets with +Inf. Each is one of `bounds`, so their counts are
    /// exact. Coarse on purpose: a dependency's classic buckets are series a Prometheus keeps, and
    /// these answer threshold questions (the share of factory runs under 7.8 ms). Quantiles come
    /// from `quantile(_:)`, or from the native histogram, read from every bucket.
    public static let exportedBounds: [Double] = stride(from: -17, through: 3, by: 2).map { Double(sign: .plus, exponent: $0, significand: 1) }
    /// For each exported bound, the index in `bucketCounts` of the bucket it closes.
    static let exportedEnds: [Int] = exportedBounds.map { bound in bounds.firstIndex { abs($0 - bound) < bound * 1e-9 }! }

    /// For each bucket, the exported bucket it falls in (`exportedBounds.count` for the last, +Inf).
    static let exportedSlot: [Int] = (0..<LatencyBuckets.count).map { index in
        exportedEnds.firstIndex { index <= $0 } ?? exportedEnds.count
    }

    /// A bucket that holds observations: its index (0 for the first bound, `bounds.count` for the
    /// one above them all) and its count.
    public struct Occupied: Sendable, Equatable {
        public let index: Int
        public let count: UInt64
    }

    /// The buckets that hold observations, in bucket order. Most histograms have a few, so a
    /// snapshot of many keys keeps a few entries each rather than 189 counts.
    public let occupied: [Occupied]
    /// Number of observations.
    public let count: UInt64
    /// Sum of all observations, in seconds.
    public let sumSeconds: Double

    /// Observations per bucket, not cumulative; `bounds.count + 1` entries.
    public var bucketCounts: [UInt64] {
        var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
        for bucket in occupied { counts[bucket.index] = bucket.count }
        return counts
    }

    /// Observations at or below each bound, then the total (Prometheus `le` buckets).
    public var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return bucketCounts.map { running &+= $0; return running }
    }

    /// Counts per exported bucket (`exportedBounds`, then +Inf), not cumulative: each exported bucket
    /// joins the buckets between its bound and the previous exported one.
    public var exportedBucketCounts: [UInt64] {
        var counts = [UInt64](repeating: 0, count: Self.exportedBounds.count + 1)
        for bucket in occupied { counts[Self.exportedSlot[bucket.index]] &+= bucket.count }
        return counts
    }

    /// An estimate of quantile `q` (0...1), in seconds; `nil` when empty. The q-quantile observation
    /// lies in a bucket (a, b] with b = 1.0905 a; the estimate is the bucket's geometric middle √(ab),
    /// so it is within 4.5 % of that observation whatever the distribution. In the first bucket the
    /// estimate is interpolated linearly in (0, 0.95 µs]; above 10.4 s it is 10.4 s (a lower bound).
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(0, min(1, q)) * Double(count)
        var seen: UInt64 = 0
        for bucket in occupied {
            if Double(seen + bucket.count) >= rank {
                let index = bucket.index
                guard index < Self.bounds.count else { return Self.bounds.last }
                guard index > 0 else { return Self.bounds[0] * max(0, min(1, (rank - Double(seen)) / Double(bucket.count))) }
                return (Self.bounds[index - 1] * Self.bounds[index]).squareRoot()
            }
            seen += bucket.count
        }
        return Self.bounds.last
    }

    /// The observations of both histograms together (the same bounds).
    public func merged(with other: LatencyHistogram) -> LatencyHistogram {
        if other.occupied.isEmpty { return LatencyHistogram(occupied: occupied, count: count, sumSeconds: sumSeconds + other.sumSeconds) }
        if occupied.isEmpty { return LatencyHistogram(occupied: other.occupied, count: other.count, sumSeconds: sumSeconds + other.sumSeconds) }
        var joined: [Occupied] = []
        joined.reserveCapacity(occupied.count + other.occupied.count)
        var left = occupied[...], right = other.occupied[...]
        while let a = left.first, let b = right.first {
            if a.index == b.index {
                joined.append(Occupied(index: a.index, count: a.count &+ b.count))
                left.removeFirst()
                right.removeFirst()
            } else if a.index < b.index {
                joined.append(a)
                left.removeFirst()
            } else {
                joined.append(b)
                right.removeFirst()
            }
        }
        joined += left
        joined += right
        return LatencyHistogram(occupied: joined, count: count &+ other.count, sumSeconds: sumSeconds + other.sumSeconds)
    }

    /// This histogram's shape with `total` observations: each bucket's share of `total` (rounded on
    /// the cumulative counts, so they add up to `total` exactly) and the sum scaled alike.
    func weighted(to total: UInt64) -> LatencyHistogram {
        guard count > 0 else { return self }
        var weighted: [Occupied] = []
        weighted.reserveCapacity(occupied.count)
        var running: UInt64 = 0, placed: UInt64 = 0
        for bucket in occupied {
            running += bucket.count
            // running ≤ count, so running × total / count ≤ total: the quotient fits.
            let upTo = count.dividingFullWidth(running.multipliedFullWidth(by: total)).quotient
            if upTo > placed { weighted.append(Occupied(index: bucket.index, count: upTo - placed)) }
            placed = upTo
        }
        return LatencyHistogram(occupied: weighted, count: total, sumSeconds: sumSeconds * (Double(total) / Double(count)))
    }

    /// A histogram of a record's `LatencyBuckets.count` bucket words and its sum of nanoseconds.
    init(words: UnsafePointer<UInt64>) {
        var occupied: [Occupied] = []
        var total: UInt64 = 0
        for index in 0..<LatencyBuckets.count where words[index] != 0 {
            occupied.append(Occupied(index: index, count: words[index]))
            total &+= words[index]
        }
        self.init(occupied: occupied, count: total, sumSeconds: Double(words[LatencyBuckets.count]) / 1e9)
    }

    init(counts: [UInt64], sumNanos: UInt64) {
        precondition(counts.count == LatencyBuckets.count, "one count per bucket")
        self = (counts + [sumNanos]).withUnsafeBufferPointer { LatencyHistogram(words: $0.baseAddress!) }
    }

    private init(occupied: [Occupied], count: UInt64, sumSeconds: Double) {
        self.occupied = occupied
        self.count = count
        self.sumSeconds = sumSeconds
    }

    static let empty = LatencyHistogram(occupied: [], count: 0, sumSeconds: 0)
}

/// What a container recorded for one key.
public struct ServiceStatistics: Sendable {
    /// The key's description: `TypeName` or `name (TypeName)`.
    public let service: String
    /// The registration's scope; `nil` for a key that was asked for but is not registered.
    public let scope: Scope?
    /// Resolves of the key that succeeded (cached hits and factory runs). A failed attempt is counted
    /// in `errors` only, so `errorCount / (errorCount + resolutions)` is the share of attempts that failed.
    public let resolutions: UInt64
    /// Instances its factory made.
    public let instancesCreated: UInt64
    /// Failed resolves, by kind.
    public let errors: [ResolutionError.Kind: UInt64]
    /// Resolves slower than `UnifiedDI.slowResolutionThreshold`.
    public let slowResolutions: UInt64
    /// Latency of cached hits: one in `Container.hitSamplingInterval` is timed.
    public let cachedHitLatency: LatencyHistogram
    /// Latency of resolves that ran the factory; every one is timed.
    public let factoryLatency: LatencyHistogram
    /// Whether an instance is held right now.
    public let isInstantiated: Bool
    /// Whether its factory can throw (registered with a throwing or async factory).
    public var factoryCanThrow = false

    /// All errors, whatever their kind.
    public var errorCount: UInt64 { errors.values.reduce(0, &+) }

    /// The error counts an exporter shows, in `Kind` order: every kind that happened, and
    /// `factoryFailed` at 0 from its registration for a service whose factory can throw, so that
    /// the first failures of its upstream are an increase of a counter that already exists (a burst
    /// within one scrape is then seen by `rate()`). The other kinds are programming errors (a
    /// cycle, an argument of the wrong type) that recur at every attempt: their counters start with
    /// the first, and grow from the next scrape on.
    public var exportedErrors: [(kind: ResolutionError.Kind, count: UInt64)] {
        ResolutionError.Kind.allCases.compactMap { kind in
            if let count = errors[kind] { return (kind, count) }
            return kind == .factoryFailed && factoryCanThrow ? (kind, 0) : nil
        }
    }

    /// Every resolve, both paths: what the quantiles users see (`/metrics`' summary, `/dependencies`,
    /// the status page, `weave-health top`) are read from. Cached hits are timed one in
    /// `Container.hitSamplingInterval`, so each timed hit is weighted back to the hits it stands for
    /// (the successful resolves that ran no factory, shared among the timed ones): one 50 ms factory
    /// run among 19,999 hits of 16 µs is then a p99 of 16 µs, not of 50 ms (#65).
    public var latency: LatencyHistogram {
        let hits = resolutions - min(resolutions, factoryLatency.count)
        guard cachedHitLatency.count > 0, hits > cachedHitLatency.count else { return factoryLatency.merged(with: cachedHitLatency) }
        return factoryLatency.merged(with: cachedHitLatency.weighted(to: hits))
    }
}

/// An immutable snapshot of a container's statistics.
public struct ContainerStatistics: Sendable {
    /// One entry per registered key, plus keys asked for but not registered; sorted by service.
    public let services: [ServiceStatistics]
    /// `.cached` instances dropped by `evictCached()` or memory pressure.
    public let cachedEvictions: UInt64
    /// Memory-pressure events this container reacted to.
    public let memoryPressureEvents: UInt64

    /// The entry for `service`, if any.
    public subscript(service: String) -> ServiceStatistics? {
        services.first { $0.service == service }
    }
}

extension Container {
    /// Keys whose records are copied under one hold of a shard lock, so a snapshot never blocks a
    /// resolver for more than a few microseconds, whatever the number of keys.
    static let snapshotChunk = 32

    /// Takes a snapshot of the statistics. Counts are exact; each shard is locked briefly, chunk by chunk.
    public func statistics() -> ContainerStatistics {
        let (listed, version) = lock.withReadLock { _ in
            (table.all.map { ($0.key.description, $0.scope, $0.index, $0.isInstantiated, $0.factoryCanThrow) }, table.version)
        }
        // Chunk by chunk of registration indices: each shard adds the chunk's records into one small
        // buffer (locked once per chunk), and the chunk's statistics are made from it while it is in
        // the cache. A buffer for every key at once (2.8 MB for 1,000) was fresh memory at each
        // snapshot: its page faults and cache misses cost more than the additions.
        let chunk = Self.snapshotChunk
        let stride = StatsField.wordsPerKey
        let byIndex = Dictionary(grouping: listed.indices) { listed[$0].2 / chunk }
        let totals = UnsafeMutablePointer<UInt64>.allocate(capacity: chunk * stride)
        defer { totals.deallocate() }
        let shards = lock.allShards
        var built = [ServiceStatistics?](repeating: nil, count: listed.count)
        for (block, members) in byIndex {
            let start = block * chunk
            totals.initialize(repeating: 0, count: chunk * stride)
            for shard in shards {
                shard.lock.withLock { shard.counters.pointee.accumulate(start..<start + chunk, into: totals) }
            }
            for member in members {
                let (service, scope, index, instantiated, canThrow) = listed[member]
                let record = UnsafePointer(totals + (index - start) * stride)
                var errors: [ResolutionError.Kind: UInt64] = [:]
                for (offset, kind) in ResolutionError.Kind.allCases.enumerated() where record[StatsField.errors + offset] > 0 {
                    errors[kind] = record[StatsField.errors + offset]
                }
                built[member] = ServiceStatistics(
                    service: service, scope: scope,
                    resolutions: record[StatsField.resolutions],
                    instancesCreated: record[StatsField.instancesCreated],
                    errors: errors,
                    slowResolutions: record[StatsField.slowResolutions],
                    cachedHitLatency: LatencyHistogram(words: record + StatsField.hitLatency),
                    factoryLatency: LatencyHistogram(words: record + StatsField.factoryLatency),
                    isInstantiated: instantiated, factoryCanThrow: canThrow)
            }
        }
        // In name order: the order is sorted once per table version, and each record is moved once.
        let order: [Int]
        if let cached = snapshotOrder.withLock({ $0 }), cached.version == version {
            order = cached.order
        } else {
            order = listed.indices.sorted { listed[$0].0 < listed[$1].0 }
            snapshotOrder.withLock { $0 = (version, order) }
        }
        var services = order.map { built[$0]! }
        var missing: [String: [ResolutionError.Kind: UInt64]] = [:]
        for (key, count) in unregisteredErrors.withLock({ $0 }) {
            let parts = key.split(separator: "\u{0}", maxSplits: 1).map(String.init)
            guard parts.count == 2, let kind = ResolutionError.Kind(rawValue: parts[1]) else { continue }
            missing[parts[0], default: [:]][kind, default: 0] += count
        }
        for (service, errors) in missing {
            services.append(ServiceStatistics(
                service: service, scope: nil, resolutions: 0, instancesCreated: 0, errors: errors,
                slowResolutions: 0, cachedHitLatency: .empty, factoryLatency: .empty, isInstantiated: false))
        }
        if !missing.isEmpty { services.sort { $0.service < $1.service } }
        return ContainerStatistics(
            services: services,
            cachedEvictions: evictions.load(ordering: .relaxed),
            memoryPressureEvents: pressureEvents.load(ordering: .relaxed))
    }
}
