import Glibc
import Synchronization

/// What test factories measured themselves, by name, in milliseconds: the known truth a container's
/// timings are held to, within 1 ms + 5 %. On a busy machine a sleep takes longer than asked, and a
/// thread may wait for a core anywhere, so the factories' own clocks are the truth, not the sleeps.
public final class FactoryTimes: Sendable {
    private let times = Mutex<[String: (total: Double, own: Double)]>([:])

    public init() {}

    /// A factory's body: sleeps, then runs `nested` (a resolve), and keeps under `name` its total and
    /// its own time (the total without `nested`).
    public func measure(_ name: String, sleeping milliseconds: UInt32, then nested: () -> Void = {}) {
        let start = ContinuousClock.now
        usleep(milliseconds * 1_000)
        let nestedStart = ContinuousClock.now
        nested()
        let end = ContinuousClock.now
        let total = Double((end - start) / .nanoseconds(1)) / 1e6, own = Double((nestedStart - start) / .nanoseconds(1)) / 1e6
        times.withLock { $0[name] = (total, own) }
    }

    /// An async factory's body: `measure`, with an async `nested` (a `resolveAsync`).
    public func measureAsync(_ name: String, sleeping milliseconds: UInt32, then nested: () async throws -> Void = {}) async rethrows {
        let start = ContinuousClock.now
        usleep(milliseconds * 1_000)
        let nestedStart = ContinuousClock.now
        try await nested()
        let end = ContinuousClock.now
        let total = Double((end - start) / .nanoseconds(1)) / 1e6, own = Double((nestedStart - start) / .nanoseconds(1)) / 1e6
        times.withLock { $0[name] = (total, own) }
    }

    /// What `name` measured, if it ran.
    public subscript(name: String) -> (total: Double, own: Double)? {
        times.withLock { $0[name] }
    }

    /// How `total` and `own` (ms) a container measured for `name` differ from what it measured
    /// itself, past 1 ms + 5 %; a run that never measured itself is one too.
    public func deviations(_ name: String, total: Double, own: Double) -> [String] {
        compared(name, total: total, own: own) { abs($0 - $1) }
    }

    /// How `total` and `own` (ms) fall short of what `name` measured itself, past 1 ms + 5 %. For
    /// async runs: a parent's self time also holds its wait for a thread once a nested run has
    /// ended, which a loaded machine makes as long as it likes.
    public func shortfalls(_ name: String, total: Double, own: Double) -> [String] {
        compared(name, total: total, own: own) { $1 - $0 }
    }

    private func compared(_ name: String, total: Double, own: Double, by distance: (_ measured: Double, _ known: Double) -> Double) -> [String] {
        guard let known = self[name] else { return ["\(name) did not run"] }
        var found: [String] = []
        if distance(total, known.total) > known.total * 0.05 + 1 { found.append("\(name) total \(total) ms, inside \(known.total)") }
        if distance(own, known.own) > known.own * 0.05 + 1 { found.append("\(name) self \(own) ms, inside \(known.own)") }
        return found
    }
}
