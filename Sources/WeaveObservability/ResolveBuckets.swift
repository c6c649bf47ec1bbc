/// Which dependencies keep their latency buckets in `weave_resolve_duration_seconds`: the cardinality
/// control of a container's metrics. A dependency without buckets keeps its `+Inf` bucket, `_sum` and
/// `_count` (3 series per path instead of 18), so rates, means and counts still work; only quantiles
/// need the buckets.
public enum ResolveBuckets: Sendable, Equatable {
    /// Every dependency keeps its buckets (the default).
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
