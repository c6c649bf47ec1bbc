import WeaveSupport

/// The applications whose checks a scrape showed in another state than their last `/health` read,
/// to be read again at once (`AppHealthService`), and when each was last brought forward: at most
/// once per `interval` each, and never another application's round (#66).
final class EarlyHealthReads: Sendable {
    private let state = Locked<(apps: Set<String>, broughtForward: [String: ContinuousClock.Instant])>(([], [:]))
    /// Fired when an early read is asked, which the health rounds wait on between rounds.
    let asked = ChangeSignal()

    /// Asks an early read of each of `apps` not brought forward within `interval` of `now`.
    func ask(_ apps: [String], now: ContinuousClock.Instant, interval: Duration) {
        let added = state.withLock { state in
            state.broughtForward = state.broughtForward.filter { now - $0.value < interval }
            for app in apps where state.broughtForward[app] == nil {
                state.apps.insert(app)
                state.broughtForward[app] = now
            }
            return !state.apps.isEmpty
        }
        if added { asked.signal() }
    }

    /// Whether an early read is asked and not taken yet.
    var isPending: Bool { state.withLock { !$0.apps.isEmpty } }

    /// The applications asked an early read of since the last call.
    func take() -> Set<String> {
        state.withLock { state in
            defer { state.apps = [] }
            return state.apps
        }
    }
}
