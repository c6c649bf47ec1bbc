import WeaveSupport

/// The factory runs a container made while its application started (until `Container.endStartup()`,
/// which an `AppEndpoint` calls when the application is first ready): per dependency its first run,
/// with its parent (the run it was made in), its start, total and self time. Served on
/// `/dependencies`, drawn as a waterfall on weave-healthd's status page, and logged once when
/// startup ends (`Instrumentation.onStartup`).
public struct StartupTree: Sendable, Equatable {
    /// A dependency's first factory run.
    public struct Run: Sendable, Equatable {
        /// The registration's description: `TypeName`, or `name (TypeName)`.
        public let service: String
        /// The run it was made in; nil for a resolve made outside any factory.
        public let parent: String?
        /// From the start of the tree's first run to this run's start.
        public let start: Duration
        /// From its factory's start to its end, the runs nested in it included.
        public let total: Duration
        /// `total` minus the runs nested directly in it.
        public let selfTime: Duration

        public init(service: String, parent: String?, start: Duration, total: Duration, selfTime: Duration) {
            self.service = service
            self.parent = parent
            self.start = start
            self.total = total
            self.selfTime = selfTime
        }
    }

    /// In start order.
    public let runs: [Run]
    /// When startup ended (nothing is added since), in seconds since the Unix epoch; nil while it lasts.
    public let endedAt: Double?
    /// Runs left out: past `maxRuns` in the container, or past a listing's limit.
    public let omitted: Int

    /// The most runs a container keeps (a dependency's first run only, so one per registration).
    public static let maxRuns = 1_000

    public init(runs: [Run], endedAt: Double?, omitted: Int) {
        self.runs = runs
        self.endedAt = endedAt
        self.omitted = omitted
    }

    /// Whether startup ended.
    public var ended: Bool { endedAt != nil }

    /// The time spent resolving during startup: the totals of the runs made outside any factory.
    public var total: Duration {
        runs.filter { $0.parent == nil }.reduce(.zero) { $0 + $1.total }
    }

    /// The run with the most self time.
    public var slowest: Run? {
        runs.max { $0.selfTime < $1.selfTime }
    }

    /// From the outermost run down to `service`'s (`App → ReportBuilder → Database`); empty when
    /// `service` made no run kept here. A parent that was not kept ends the walk up.
    public func chain(to service: String) -> [Run] {
        let byService = Dictionary(runs.map { ($0.service, $0) }) { first, _ in first }
        var chain: [Run] = []
        var step = byService[service]
        // Bounded by the runs: a parent named twice on the way up is a loop in what was read.
        while let run = step, chain.count < runs.count, !chain.contains(where: { $0.service == run.service }) {
            chain.append(run)
            step = run.parent.flatMap { byService[$0] }
        }
        return chain.reversed()
    }

    /// The `limit` runs with the longest totals, in start order (a run's total holds its children's,
    /// so the runs kept are mostly closed under their parents).
    public func longest(_ limit: Int) -> StartupTree {
        guard runs.count > limit else { return self }
        let kept = Set(runs.indices.sorted { runs[$0].total > runs[$1].total }.prefix(max(0, limit)))
        return StartupTree(runs: runs.indices.filter(kept.contains).map { runs[$0] }, endedAt: endedAt,
                           omitted: omitted + runs.count - kept.count)
    }

    /// The slowest chain, as the journal's `WEAVE_CHAIN` has it.
    public var slowestChainText: String {
        slowest.map { SlowResolution.chainText(chain(to: $0.service).map(\.service)) } ?? ""
    }

    /// The slowest chain's times, as `SlowResolution.chainTimesText` (`WEAVE_CHAIN_USEC`).
    public var slowestChainTimesText: String {
        slowest.map { SlowResolution.timesText(chain(to: $0.service).map { ($0.total, $0.selfTime) }) } ?? ""
    }
}
