/// Which dependencies keep the 12 buckets of their factory path in `weave_resolve_duration_seconds`:
/// the cardinality control of a container's metrics. A dependency without them keeps its `+Inf`
/// bucket, `_sum` and `_count`, so rates, means and counts still work, and every dependency keeps its
/// summary (`weave_resolve_latency_seconds`, p50 and p99 within 4.5 %) and, in the protobuf
/// exposition, its native histogram. The cached-hit path never
/// exports more than `+Inf`: its resolves are below the first exported bound.
public enum ResolveBuckets: Sendable, Equatable {
    /// The default: the 10 slowest dependencies, so an application of 100 services is about 1,400
    /// series.
    public static let `default` = ResolveBuckets.slowest(10)

    /// Every dependency keeps its buckets.
    case all
    /// No dependency keeps its buckets.
    case none
    /// Only the N dependencies with the highest mean factory latency keep their buckets (ties by name).
    /// The set follows the latencies, so a dependency's bucket series may come and go.
    case slowest(Int)

    /// `all`, `none`, or a whole number N for `slowest(N)`; nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "all": self = .all
        case "none": self = .none
        default:
            guard let count = Int(text), count >= 0 else { return nil }
            self = .slowest(count)
        }
    }
}
