import WeaveSupport
import WeaveSystemd

/// What the daemon has told of each application's life, kept across reloads (a reload makes a new
/// fleet, which knows nothing yet): whether it last logged it up or down, so that a reload logs
/// nothing of applications that did not change, and the applications that stopped while their
/// systemd unit is still enabled. Those stay targets, down (`weave_app_up` 0, `WeaveAppDown`),
/// until they come back or their unit is disabled, masked or removed: someone stopping a service
/// is an outage, not a departure. Process-wide; bounded to `maxApps` applications.
final class AppLifecycle: Sendable {
    static let maxApps = 4_096
    private let state = Locked<(announced: [String: Bool], stopped: [String: AppTarget])>(([:], [:]))

    /// What a gone application's unit says of it.
    enum Verdict: Equatable {
        /// Enabled (or static) and inactive or failed: it was stopped, and is expected back.
        case stopped
        /// Starting, stopping or running again: a restart in progress; decided at a later round.
        case changing
        /// Disabled, masked, removed, or not a unit to come back: it left.
        case left
    }

    static func verdict(_ unit: SystemdUnit) -> Verdict {
        guard unit.loadState == "loaded" else { return .left }
        switch unit.activeState {
        case "activating", "deactivating", "reloading", "active": return .changing
        default: break
        }
        let expectedBack: Set<String> = ["enabled", "enabled-runtime", "linked", "linked-runtime", "alias", "static", "indirect", "generated"]
        return unit.unitFileState.map(expectedBack.contains) == true ? .stopped : .left
    }

    /// Records that `app` is `up` (or down); true when that is news, to be logged.
    func announce(_ app: String, up: Bool) -> Bool {
        state.withLock { state in
            guard state.announced[app] != up else { return false }
            guard state.announced[app] != nil || state.announced.count < Self.maxApps else { return false }
            state.announced[app] = up
            if up { state.stopped[app] = nil }
            return true
        }
    }

    /// `target` stopped while its unit (`target.unit`) stays enabled: a target, down, from now on.
    func stop(_ target: AppTarget) {
        state.withLock { state in
            guard state.stopped[target.name] != nil || state.stopped.count < Self.maxApps else { return }
            state.stopped[target.name] = target
        }
    }

    /// No longer keeps `app` as stopped (its unit was started, disabled or removed): the next
    /// listing finds its socket again, or finds it gone and says it left.
    func release(_ app: String) {
        state.withLock { _ = $0.stopped.removeValue(forKey: app) }
    }

    /// Whether `app` is kept as stopped.
    func isStopped(_ app: String) -> Bool {
        state.withLock { $0.stopped[app] != nil }
    }

    /// The stopped applications, as targets.
    func stoppedTargets() -> [AppTarget] {
        state.withLock { Array($0.stopped.values) }
    }

    /// Forgets `app`: it left, and its next appearance is news.
    func forget(_ app: String) {
        state.withLock { state in
            state.announced[app] = nil
            state.stopped[app] = nil
        }
    }
}
