import WeaveSupport

/// The async factory runs of one outermost async resolve, kept until it ends: then its slow runs
/// are reported with their chains and self times, as a thread's `ResolutionTrace` does for
/// synchronous runs. The runs it awaits share it through a task-local (`Container.asyncRun`), and
/// may run at once (a factory can await several), so it is locked, and each run names its parent
/// rather than relying on depth. A run's self time is its total less the runs it awaited (and the
/// synchronous runs it made that were long enough to be kept, `adopt`).
@usableFromInline
final class AsyncResolutionTrace: Sendable {
    /// A run in progress: its trace, its number there and its parent's.
    @usableFromInline
    struct Run: Sendable {
        let trace: AsyncResolutionTrace
        let id: Int
        let parent: Int?
    }

    private struct Entry {
        let id: Int
        let parent: Int?
        let service: String
        let total: UInt64
        let own: UInt64
        let report: ResolutionTrace.Report?
    }

    private let state = Locked<(next: Int, entries: [Entry])>((0, []))

    /// A run starting under `parent` (the run of the task-local, nil for an outermost one).
    static func begin(under parent: Run?) -> Run {
        let trace = parent?.trace ?? AsyncResolutionTrace()
        let id = trace.state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        return Run(trace: trace, id: id, parent: parent?.id)
    }

    /// The self time of `run`, which took `total`: less the runs nested in it that ended and were kept.
    func selfTime(of run: Run, total: UInt64) -> UInt64 {
        let nested = state.withLock { state in
            state.entries.reduce(UInt64(0)) { $1.parent == run.id ? $0 &+ $1.total : $0 }
        }
        return total - min(total, nested)
    }

    /// Keeps `run`'s end (`recorded`, named `service`), past `ResolutionTrace.maxEntries` dropped
    /// (its report then goes alone).
    func end(_ run: Run, _ recorded: FactoryRun, service: String, report: ResolutionTrace.Report?) -> Bool {
        state.withLock { state in
            guard state.entries.count < ResolutionTrace.maxEntries else { return false }
            state.entries.append(Entry(id: run.id, parent: run.parent, service: service, total: recorded.total,
                                       own: recorded.selfTime, report: report))
            return true
        }
    }

    /// Takes the synchronous runs a thread kept while `run`'s factory resolved them (its outermost
    /// synchronous run ended): they join `run`'s chain, nested in it, and its self time leaves them
    /// out. False when they do not fit; the thread then reports them alone.
    func adopt(_ trace: ResolutionTrace, under run: Run) -> Bool {
        let parents = trace.parents()
        return state.withLock { state in
            guard state.entries.count + trace.entries.count <= ResolutionTrace.maxEntries else { return false }
            let first = state.next
            state.next += trace.entries.count
            for (index, entry) in trace.entries.enumerated() {
                state.entries.append(Entry(id: first + index, parent: parents[index].map { first + $0 } ?? run.id,
                                           service: entry.service, total: entry.total, own: entry.own, report: entry.report))
            }
            return true
        }
    }

    /// Reports the slow runs kept, each with its chain: the outermost run ended.
    func flush() {
        let entries = state.withLock { state in
            defer { state.entries = [] }
            return state.entries
        }
        guard entries.contains(where: { $0.report != nil }) else { return }
        let position = Dictionary(entries.enumerated().map { ($1.id, $0) }) { first, _ in first }
        ResolutionTrace.report(entries.map { ($0.service, $0.total, $0.own, $0.parent.flatMap { position[$0] }, $0.report) })
    }
}
