/// The factory runs a thread finished since its outermost resolve began, worth naming in a chain:
/// those longer than an eighth of their container's threshold (a run's total is at least each of
/// its nested runs', so every run on the way to a named one is named too). Slow runs are reported
/// when the outermost resolve ends, when every total on their chain is known: each with the chain
/// from the outermost run down through it and, below it, through the nested run with the largest
/// total at each level (the critical path: where its time went).
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
        defer { clear() }
        guard entries.contains(where: { $0.report != nil }) else { return }
        let parent = parents()
        Self.report(entries.indices.map { (entries[$0].service, entries[$0].total, entries[$0].own, parent[$0], entries[$0].report) })
    }

    /// Forgets the runs kept (reported, or taken by an async run's trace).
    func clear() {
        entries.removeAll(keepingCapacity: entries.capacity <= 64)
    }

    /// Each kept run's parent, by index (nil for the outermost). Post-order (a run ends after the
    /// runs nested in it): the runs at depth d + 1 finished since the last one at depth d are its children.
    func parents() -> [Int?] {
        var parent = [Int?](repeating: nil, count: entries.count)
        var pending: [Int: [Int]] = [:]
        for (index, entry) in entries.enumerated() {
            for child in pending.removeValue(forKey: entry.depth + 1) ?? [] { parent[child] = index }
            pending[entry.depth, default: []].append(index)
        }
        return parent
    }

    /// Reports each run of a finished resolve that has a `report` with its chain: from the outermost
    /// run down through it, then through the nested run with the largest total at each level.
    /// `runs` are in the order they ended (a run after the runs nested in it), each with its parent's
    /// index. The one home of the chain for synchronous runs (a thread's trace) and async ones
    /// (`AsyncResolutionTrace`).
    static func report(_ runs: [(service: String, total: UInt64, own: UInt64, parent: Int?, report: Report?)]) {
        var longest = [Int?](repeating: nil, count: runs.count) // each run's nested run with the largest total
        for (index, run) in runs.enumerated() {
            if let parent = run.parent, longest[parent].map({ run.total > runs[$0].total }) ?? true { longest[parent] = index }
        }
        for (index, run) in runs.enumerated() {
            guard let report = run.report else { continue }
            var above: [Int] = []
            var step = run.parent
            while let next = step, above.count < runs.count {
                above.append(next)
                step = runs[next].parent
            }
            var under: [Int] = []
            step = longest[index]
            while let next = step {
                under.append(next)
                step = longest[next]
            }
            let path = above.reversed() + [index] + under
            let chain = path.map { SlowResolution.Run(service: runs[$0].service, total: .nanoseconds(Int64(runs[$0].total)),
                                                      selfTime: .nanoseconds(Int64(runs[$0].own))) }
            report.instrumentation.slow(SlowResolution(service: run.service, duration: .nanoseconds(Int64(run.total)),
                                                       threshold: .nanoseconds(Int64(report.threshold)), chain: chain,
                                                       position: above.count),
                                        throttle: report.throttle)
        }
    }
}
