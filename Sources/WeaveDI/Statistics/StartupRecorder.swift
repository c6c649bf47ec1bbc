public import Synchronization
import WeaveSupport

/// Keeps a container's startup tree (`StartupTree`) until startup ends. While it is open the first
/// factory run of each registration takes a lock here, to append to a list, and later runs read a
/// flag of their registration's; once it has ended a run only loads `isOpen`, a line no thread
/// writes again. A container whose startup is never ended costs its resolves nothing more.
@usableFromInline
final class StartupRecorder: Sendable {
    struct Entry {
        let service: String
        let parent: String?
        /// An `IntervalClock` reading.
        let start: UInt64
        let nanos: UInt64
        let own: UInt64
    }

    struct State {
        var entries: [Entry] = []
        var seen: Set<String> = []
        var omitted = 0
        /// Seconds since the Unix epoch.
        var endedAt: Double?
    }

    /// Whether startup is still being recorded.
    @usableFromInline let isOpen = Atomic<Bool>(true)
    private let state = Locked(State())

    /// Keeps a factory run if it is its dependency's first.
    func record(_ run: FactoryRun) {
        let entry = Entry(service: run.service, parent: run.parentName, start: run.start, nanos: run.total, own: run.selfTime)
        state.withLock { state in
            guard state.endedAt == nil, !state.seen.contains(entry.service) else { return }
            guard state.entries.count < StartupTree.maxRuns else {
                state.omitted += 1
                return
            }
            state.seen.insert(entry.service)
            state.entries.append(entry)
        }
    }

    /// Ends startup; true the first time.
    func end() -> Bool {
        isOpen.store(false, ordering: .relaxed)
        let now = WallClock.now()
        return state.withLock { state in
            guard state.endedAt == nil else { return false }
            state.endedAt = now
            return true
        }
    }

    /// The tree so far, its times read with `clock`.
    func tree(_ clock: IntervalClock.Calibration) -> StartupTree {
        let (entries, omitted, endedAt) = state.withLock { ($0.entries, $0.omitted, $0.endedAt) }
        let origin = entries.map(\.start).min() ?? 0
        let runs = entries.sorted { $0.start < $1.start }.map { entry in
            StartupTree.Run(service: entry.service, parent: entry.parent,
                            start: .nanoseconds(Int64(clock.nanoseconds(entry.start &- origin))),
                            total: .nanoseconds(Int64(entry.nanos)), selfTime: .nanoseconds(Int64(entry.own)))
        }
        return StartupTree(runs: runs, endedAt: endedAt, omitted: omitted)
    }
}
