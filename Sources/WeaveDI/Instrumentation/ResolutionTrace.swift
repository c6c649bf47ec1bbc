/// The factory runs a thread finished since its outermost resolve began, worth naming in a chain:
/// those longer than an eighth of their container's threshold (a run's total is at least each of
/// its nested runs', so every run on the way to a named one is named too). Slow runs are reported
/// when the outermost resolve ends, when every total on their chain is known: each with the chain
/// from the outermost run down through it to the run with the most self time below it.
/// One per thread (`ThreadFrame.trace`), written by that thread only.
@usableFromInline
final class ResolutionTrace {
    /// Where a slow run is reported: its container's instrumentation, rate limit and threshold.
    struct Report {
        let instrumentation: Instrumentation
        let throttle: LogThrottle
        let threshold: UInt64
    }

    struct Entry {
        let service: String
        /// 1 for the outermost run.
        let depth: Int
        let total: UInt64
        let own: UInt64
        let report: Report?
    }

    /// Runs kept at most until the outermost ends; past it, slow ones are reported alone.
    static let maxEntries = 1_024

    private(set) var entries: [Entry] = []

    /// Keeps a finished run; false when the trace is full.
    func append(_ entry: Entry) -> Bool {
        guard entries.count < Self.maxEntries else { return false }
        entries.append(entry)
        return true
    }

    /// Reports the slow runs kept, each with its chain, and forgets them all: the outermost resolve ended.
    func flush() {
        defer { entries.removeAll(keepingCapacity: entries.capacity <= 64) }
        guard entries.contains(where: { $0.report != nil }) else { return }
        // Post-order (a run ends after the runs nested in it): the runs at depth d + 1 finished since
        // the last one at depth d are its children.
        var parent = [Int?](repeating: nil, count: entries.count)
        var heaviest = [Int?](repeating: nil, count: entries.count) // the child whose subtree has the most self time
        var mostOwn = entries.map(\.own) // the most self time in each subtree
        var pending: [Int: [Int]] = [:]
        for (index, entry) in entries.enumerated() {
            for child in pending.removeValue(forKey: entry.depth + 1) ?? [] {
                parent[child] = index
                if heaviest[index].map({ mostOwn[child] > mostOwn[$0] }) ?? true { heaviest[index] = child }
            }
            if let child = heaviest[index] { mostOwn[index] = max(entry.own, mostOwn[child]) }
            pending[entry.depth, default: []].append(index)
        }
        /// The heaviest child of `index`, when its subtree has a run with more self time than `index`'s own.
        func below(_ index: Int) -> Int? {
            heaviest[index].flatMap { mostOwn[$0] > entries[index].own ? $0 : nil }
        }
        for (index, entry) in entries.enumerated() {
            guard let report = entry.report else { continue }
            var above: [Int] = []
            var step = parent[index]
            while let next = step {
                above.append(next)
                step = parent[next]
            }
            var under: [Int] = []
            step = below(index)
            while let next = step {
                under.append(next)
                step = below(next)
            }
            let path = above.reversed() + [index] + under
            let chain = path.map { SlowResolution.Run(service: entries[$0].service, total: .nanoseconds(Int64(entries[$0].total)),
                                                      selfTime: .nanoseconds(Int64(entries[$0].own))) }
            report.instrumentation.slow(SlowResolution(service: entry.service, duration: .nanoseconds(Int64(entry.total)),
                                                       threshold: .nanoseconds(Int64(report.threshold)), chain: chain,
                                                       position: above.count),
                                        throttle: report.throttle)
        }
    }
}
