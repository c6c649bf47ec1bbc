import WeaveHealth
import WeaveSupport

/// The last hour of every check and application, in the daemon's memory for the status page: per
/// name, the worst state of each minute, when the state last changed, and the recent transitions.
/// Bounded (`maxNames`, `maxTransitions`), and lost on restart by design: Prometheus keeps history.
final class StatusHistory: Sendable {
    /// One name's record.
    struct Track: Sendable {
        /// The worst state of each of the last 60 minutes, two bits a minute, the latest lowest.
        var hour: Hour
        var state: HealthState
        /// When `state` began, or when the daemon first saw the name (`sinceStart`).
        var since: Double
        /// Whether `since` is the first sight of the name rather than a change.
        var sinceStart: Bool
        var lastSeen: Double
    }

    /// Sixty minutes of states in one value: no allocation per name, and a page compares and hashes
    /// a whole hour at once.
    struct Hour: Hashable, Sendable {
        /// Minute `k` before the latest is bits `2k` and `2k + 1`: 0 none, 1 healthy, 2 degraded, 3 unhealthy.
        private(set) var bits: UInt128 = 0

        static let mask: UInt128 = (1 << (2 * UInt128(StatusHistory.minutes))) - 1

        /// Moved `minutes` minutes on: the oldest drop out, and the new ones have no record.
        func shifted(by minutes: Int) -> Hour {
            guard minutes > 0 else { return self }
            return Hour(bits: minutes >= StatusHistory.minutes ? 0 : (bits << (2 * UInt128(minutes))) & Self.mask)
        }

        /// Keeps `state` for the latest minute if it is worse than what the minute holds.
        mutating func note(_ state: HealthState) {
            let code = Self.code(state)
            if bits & 3 < code { bits = (bits & ~3) | code }
        }

        /// Oldest first; nil for a minute without a record.
        var states: [HealthState?] {
            (0..<StatusHistory.minutes).reversed().map { Self.state(UInt8(truncatingIfNeeded: (bits >> (2 * UInt128($0))) & 3)) }
        }

        private static func code(_ state: HealthState) -> UInt128 {
            switch state {
            case .healthy: 1
            case .degraded: 2
            case .unhealthy: 3
            }
        }

        private static func state(_ code: UInt8) -> HealthState? {
            switch code {
            case 1: .healthy
            case 2: .degraded
            case 3: .unhealthy
            default: nil
            }
        }
    }

    struct Transition: Sendable {
        let time: Double
        let name: String
        let change: Change
        let reason: String?

        enum Change: Sendable, Equatable {
            /// A check's (or an application's aggregate) state changed.
            case state(from: HealthState, to: HealthState)
            /// The application runs anew (its process started at `time`): its checks' history starts again.
            case restarted
            /// The application stopped gracefully and removed its socket.
            case left(from: HealthState)
        }
    }

    /// Names kept at most: a host's checks and its applications' components (1,000 each at most).
    static let maxNames = 20_000
    static let maxTransitions = 200
    static let minutes = 60

    private struct State {
        var tracks: [String: Track] = [:]
        /// Each track's latest minute is this one (seconds since the epoch ÷ 60).
        var minute = 0
        var transitions: [Transition] = []
        /// When each application present at the last record started (nil: not known yet).
        var apps: [String: Double?] = [:]
    }

    private let state = Locked(State())

    /// Records `records` as seen at `time` (seconds since the Unix epoch), with the applications
    /// present and when each started: one that started anew has its checks' history start again,
    /// and one no longer present left. Both are transitions. Names not seen for an hour are forgotten.
    func record(_ records: [HealthCheckRecord], apps: [(name: String, started: Double?)] = [], at time: Double) {
        let minute = Int(time / 60)
        state.withLock { state in
            let shift = minute - state.minute
            if shift > 0 {
                state.tracks = state.tracks.filter { time - $0.value.lastSeen < 3_600 }
                for index in state.tracks.indices { state.tracks.values[index].hour = state.tracks.values[index].hour.shifted(by: shift) }
                state.minute = minute
            }
            for record in records {
                let now = record.status.state
                if let index = state.tracks.index(forKey: record.name) {
                    let before = state.tracks.values[index].state
                    if before != now {
                        // The transition's own time (the check's, or the application's), not this sample's.
                        let at = min(record.changedAt, time)
                        state.transitions.append(Transition(time: at, name: record.name, change: .state(from: before, to: now),
                                                            reason: record.status.reason))
                        state.tracks.values[index].state = now
                        state.tracks.values[index].since = at
                        state.tracks.values[index].sinceStart = false
                    }
                    state.tracks.values[index].hour.note(now)
                    state.tracks.values[index].lastSeen = time
                } else if state.tracks.count < Self.maxNames {
                    var hour = Hour()
                    hour.note(now)
                    state.tracks[record.name] = Track(hour: hour, state: now, since: time, sinceStart: true, lastSeen: time)
                }
            }
            noteApplications(apps, at: time, in: &state)
            if state.transitions.count > Self.maxTransitions {
                state.transitions.removeFirst(state.transitions.count - Self.maxTransitions)
            }
        }
    }

    private func noteApplications(_ apps: [(name: String, started: Double?)], at time: Double, in state: inout State) {
        var present: [String: Double?] = [:]
        for app in apps.prefix(Self.maxNames) {
            let known: Double? = state.apps[app.name].flatMap { $0 }
            present.updateValue(app.started ?? known, forKey: app.name) // kept when not known this time
            guard let started = app.started, let before = known, started > before else { continue }
            state.transitions.append(Transition(time: started, name: app.name, change: .restarted, reason: nil))
            for index in state.tracks.indices {
                let name = state.tracks.keys[index]
                guard name == app.name || name.hasPrefix(app.name + "/"), state.tracks.values[index].since < started else { continue }
                state.tracks.values[index].since = started
                state.tracks.values[index].sinceStart = false
            }
        }
        for name in state.apps.keys where present[name] == nil {
            let last = state.tracks[name]?.state ?? .healthy
            state.transitions.append(Transition(time: time, name: name, change: .left(from: last), reason: nil))
        }
        state.apps = present
    }

    /// The tracks (each hour ends `shift` minutes before `time`'s minute: `Hour.shifted(by:)` moves
    /// it on) and the transitions, oldest first. Nothing is copied.
    func snapshot(at time: Double) -> (tracks: [String: Track], transitions: [Transition], shift: Int) {
        let minute = Int(time / 60)
        return state.withLock { state in (state.tracks, state.transitions, max(0, minute - state.minute)) }
    }
}
