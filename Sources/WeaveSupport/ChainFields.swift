/// A chain of factory runs as an event carries it across an application's socket, in two fields:
/// `chain` names the runs from the outermost, joined by ` → ` (at most `maxChainBytes`, cut with
/// `…`), and `chain_usec` gives each run's total and self time in microseconds,
/// `35412/5101 30201/10102 20100/20100`, for the first `maxTimedRuns`. The one writer (an
/// application's container: `SlowResolution`, `StartupTree`) and reader (weave-healthd's journal
/// and `why`) of both, as `HealthJSON` is for `/health`.
package struct ChainFields: Sendable {
    /// The runs' names, outermost first.
    package let names: [String]
    /// Each run's total and self time in microseconds, one per name, or none.
    package let times: [(total: UInt64, own: UInt64)]

    /// The most of `chain`, in bytes (a recursion through a cycle can be 1,000 runs deep).
    package static let maxChainBytes = 1_024
    /// The most runs `chain_usec` times (its text stays within an event's 512-byte field).
    package static let maxTimedRuns = 32
    static let separator = " → "

    /// A chain to write.
    package init(names: [String], times: [(total: UInt64, own: UInt64)]) {
        self.names = names
        self.times = times.count == names.count ? times : []
    }

    /// A chain read from its fields; without `chain` (an application before 0.3), `dependency` alone.
    /// Times are kept only when there is one pair per run (a chain cut, or longer than
    /// `maxTimedRuns`, has none).
    package init(chain: String?, times: String?, dependency: String) {
        let names = chain.map { $0.split(separator: Self.separator, omittingEmptySubsequences: false).map(String.init) } ?? [dependency]
        let pairs = (times ?? "").split(separator: " ").compactMap { pair -> (total: UInt64, own: UInt64)? in
            let parts = pair.split(separator: "/")
            guard parts.count == 2, let total = UInt64(parts[0]), let own = UInt64(parts[1]) else { return nil }
            return (total, own)
        }
        self.init(names: names, times: pairs)
    }

    /// The `chain` field.
    package var chain: String { Self.chain(names) }

    /// The `chain_usec` field, for the first `maxTimedRuns` of `runs`.
    package static func timesField(_ runs: [(total: UInt64, own: UInt64)]) -> String {
        runs.prefix(maxTimedRuns).map { "\($0.total)/\($0.own)" }.joined(separator: " ")
    }

    /// `names` as the `chain` field writes them.
    package static func chain(_ names: [String]) -> String {
        names.joined(separator: separator).prefix(maxUTF8Bytes: maxChainBytes)
    }

    /// Whether it is a chain of more than one run.
    package var isChain: Bool { names.count > 1 }
}
