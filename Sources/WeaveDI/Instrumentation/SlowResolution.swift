import WeaveSupport

/// A resolve slower than its container's threshold, and why: the chain of factory runs it was part
/// of, from the outermost resolve on its thread down through it and, below it, through the nested
/// run with the largest total at each level (`OrderService → ReportBuilder → Database`), each with
/// its total and its self time (its total minus the runs nested in it: a run's total is its self
/// time, its chained run's total, and the other runs nested in it). What
/// `Instrumentation.onSlowResolution` hands over.
public struct SlowResolution: Sendable, Equatable {
    /// One factory run of the chain.
    public struct Run: Sendable, Equatable {
        /// The registration's description: `TypeName`, or `name (TypeName)`.
        public let service: String
        /// From its factory's start to its end, the runs nested in it included.
        public let total: Duration
        /// `total` minus the runs nested directly in it.
        public let selfTime: Duration

        public init(service: String, total: Duration, selfTime: Duration) {
            self.service = service
            self.total = total
            self.selfTime = selfTime
        }
    }

    /// The slow resolve's registration, and how long it took.
    public let service: String
    public let duration: Duration
    /// The container's threshold it passed.
    public let threshold: Duration
    /// From the outermost resolve through `service` (`chain[position]`) down its longest nested runs.
    public let chain: [Run]
    public let position: Int
    /// The run of `chain` with the most self time.
    public let slowest: Int

    public init(service: String, duration: Duration, threshold: Duration, chain: [Run], position: Int) {
        self.service = service
        self.duration = duration
        self.threshold = threshold
        self.chain = chain
        self.position = position
        slowest = chain.indices.max { chain[$0].selfTime < chain[$1].selfTime } ?? position
    }

    /// The slow run's own time.
    public var selfTime: Duration { chain[position].selfTime }

    /// `OrderService → ReportBuilder → Database`, at most `maxChainBytes` (cut, with `…`).
    public var chainText: String {
        Self.chainText(chain.map(\.service))
    }

    /// `services` joined as a chain is written (`ChainFields`), at most `maxChainBytes` (a startup
    /// tree's chains too).
    static func chainText(_ services: [String]) -> String {
        ChainFields.chain(services)
    }

    /// Each run's total and self time in microseconds, as `chainText` orders them:
    /// `35412/5101 30201/10102 20100/20100` (the journal's `WEAVE_CHAIN_USEC`).
    public var chainTimesText: String {
        Self.timesText(chain.map { ($0.total, $0.selfTime) })
    }

    /// `total/self` in microseconds per run, for the first `maxTimedRuns` (`ChainFields`).
    static func timesText(_ runs: [(total: Duration, selfTime: Duration)]) -> String {
        ChainFields.timesField(runs.map { (UInt64(clamping: $0.total.totalNanoseconds / 1_000), UInt64(clamping: $0.selfTime.totalNanoseconds / 1_000)) })
    }

    /// The most of `chainText`, in bytes (a recursion through a cycle can be 1,000 runs deep).
    public static let maxChainBytes = ChainFields.maxChainBytes
    /// The most runs `chainTimesText` times (its text stays within an event's 512-byte field).
    public static let maxTimedRuns = ChainFields.maxTimedRuns
}
