import WeaveDI
import WeaveHealth

/// The last hour of every check and application, in the daemon's memory for the status page: per
/// name, the worst state of each minute, when the state last changed, and the recent transitions.
/// Bounded (`maxNames`, `maxTransitions`), and lost on restart by design: Prometheus keeps history.
final class StatusHistory: Sendable {
    /// One name's record.
    struct Track: Sendable {
        /// The worst state of each of the last 60 minutes, oldest first; nil for a minute with no record.
        var minutes: [HealthState?]
        var state: HealthState
        /// When `state` began, or when the daemon first saw the name (`sinceStart`).
        var since: Double
        /// Whether `since` is the first sight of the name rather than a change.
        var sinceStart: Bool
        var lastSeen: Double
    }

    struct Transition: Sendable {
        let time: Double
        let name: String
        let from: HealthState
        let to: HealthState
        let reason: String?
    }

    /// Names kept at most: a host's checks and its applications' components (1,000 each at most).
    static let maxNames = 20_000
    static let maxTransitions = 200
    static let minutes = 60

    private struct State {
        var tracks: [String: Track] = [:]
        /// Each track's minutes end at this minute (seconds since the epoch ÷ 60).
        var minute = 0
        var transitions: [Transition] = []
    }

    private let state = Locked(State())

    /// Records `records` as seen at `time` (seconds since the Unix epoch). Names not seen for an hour
    /// are forgotten.
    func record(_ records: [HealthCheckRecord], at time: Double) {
        let minute = Int(time / 60)
        state.withLock { state in
            let shift = minute - state.minute
            if shift > 0 {
                for name in state.tracks.keys {
                    state.tracks[name]!.minutes = Self.shifted(state.tracks[name]!.minutes, by: shift)
                }
                state.minute = minute
            }
            for record in records {
                let now = record.status.state
                if var track = state.tracks[record.name] {
                    if track.state != now {
                        state.transitions.append(Transition(time: time, name: record.name, from: track.state, to: now,
                                                            reason: record.status.reason))
                        track.state = now
                        track.since = time
                        track.sinceStart = false
                    }
                    track.minutes[Self.minutes - 1] = max(track.minutes[Self.minutes - 1] ?? now, now)
                    track.lastSeen = time
                    state.tracks[record.name] = track
                } else if state.tracks.count < Self.maxNames {
                    var minutes = [HealthState?](repeating: nil, count: Self.minutes)
                    minutes[Self.minutes - 1] = now
                    state.tracks[record.name] = Track(minutes: minutes, state: now, since: time, sinceStart: true, lastSeen: time)
                }
            }
            if state.transitions.count > Self.maxTransitions {
                state.transitions.removeFirst(state.transitions.count - Self.maxTransitions)
            }
            state.tracks = state.tracks.filter { time - $0.value.lastSeen < 3_600 }
        }
    }

    /// The tracks and the transitions (oldest first), as of now.
    func snapshot(at time: Double) -> (tracks: [String: Track], transitions: [Transition]) {
        let minute = Int(time / 60)
        return state.withLock { state in
            let shift = max(0, minute - state.minute)
            return (state.tracks.mapValues { track in
                var track = track
                track.minutes = Self.shifted(track.minutes, by: shift)
                return track
            }, state.transitions)
        }
    }

    /// `minutes` moved `shift` minutes on: the oldest drop out, and the new ones have no record.
    private static func shifted(_ minutes: [HealthState?], by shift: Int) -> [HealthState?] {
        guard shift < minutes.count else { return [HealthState?](repeating: nil, count: minutes.count) }
        return Array(minutes.dropFirst(shift)) + [HealthState?](repeating: nil, count: shift)
    }
}
