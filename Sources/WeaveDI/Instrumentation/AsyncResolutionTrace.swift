import WeaveSupport

/// The async factory runs of one outermost async resolve, kept until it ends: then its slow runs
/// are reported with their chains and self times, as a thread's `ResolutionTrace` does for
/// synchronous runs. The runs it awaits share it through a task-local (`Container.asyncRun`), and
/// may run at once (a factory can await several), so it is locked, and each run names its parent
/// rather than relying on depth. A run's self time is its total less the runs it awaited.
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
        /// A synchronous run's self time, from its thread (nil: its total less the kept runs it awaited).
        let own: UInt64?
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

    /// Keeps `run`'s end, past `ResolutionTrace.maxEntries` dropped (its report then goes alone).
    func end(_ run: Run, service: String, total: UInt64, report: ResolutionTrace.Report?) -> Bool {
        state.withLock { state in
            guard state.entries.count < ResolutionTrace.maxEntries else { return false }
            state.entries.append(Entry(id: run.id, parent: run.parent, service: service, total: total, own: nil, report: report))
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
        var children = [UInt64](repeating: 0, count: entries.count)
        for entry in entries {
            if let parent = entry.parent.flatMap({ position[$0] }) { children[parent] &+= entry.total }
        }
        ResolutionTrace.report(entries.indices.map { index in
            let entry = entries[index]
            return (entry.service, entry.total, entry.own ?? entry.total - min(entry.total, children[index]),
                    entry.parent.flatMap { position[$0] }, entry.report)
        })
    }
}
