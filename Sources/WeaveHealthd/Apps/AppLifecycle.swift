import WeaveSupport
import WeaveSystemd

/// What the daemon has told of each application's life, kept across reloads (a reload makes a new
/// fleet, which knows nothing yet): whether it last logged it up or down, so that a reload logs
/// nothing of applications that did not change, and the applications that stopped while their
/// systemd unit is still enabled. Those stay targets, down (`weave_app_up` 0, `WeaveAppDown`),
/// until they come back or their unit is disabled, masked or removed: someone stopping a service
/// is an outage, not a departure. Process-wide; bounded to `maxApps` applications. The stopped
/// ones are kept in the state directory (`stopped-apps.json`), so that a restarted daemon (an
/// upgrade) still shows them down.
final class AppLifecycle: Sendable {
    /// As many as names can be bound (`AppOwners.maxNames`): one user's applications, at their own
    /// bound, cannot fill it for another's (#64).
    static let maxApps = AppOwners.maxNames
    static let fileName = "stopped-apps.json"
    static let what = "the stopped applications"
    /// What was told, the stopped applications, and whether those changed since they were saved.
    private let state = Locked<(announced: [String: Bool], stopped: [String: AppTarget], changed: Bool)>(([:], [:], false))
    private let file: StateFile?

    /// Reads the stopped applications `file` keeps (a blocking read: at startup).
    init(file: StateFile? = nil) {
        self.file = file
        if let stopped = file?.load(consequence: "those stopped before are not known", Self.parse) {
            state.withLock { $0.stopped = stopped }
        }
    }

    /// `{"stopped":[{"app":"orders","socket":"/run/weave/apps/orders.sock","unit":"orders.service"},…]}`;
    /// nil for anything else.
    static func parse(_ bytes: [UInt8]) -> [String: AppTarget]? {
        guard case .array(let items)? = JSONValue.parse(bytes)?["stopped"], items.count <= maxApps else { return nil }
        var stopped: [String: AppTarget] = [:]
        for item in items {
            guard let app = item["app"]?.string, !app.isEmpty, stopped[app] == nil, let socket = item["socket"]?.string,
                  socket.hasPrefix("/"), let unit = item["unit"]?.string, SystemdUnit.isValidName(unit) else { return nil }
            stopped[app] = AppTarget(name: app, address: .unix(path: socket), host: "localhost", pathPrefix: "", unit: unit)
        }
        return stopped
    }

    static func render(_ stopped: [String: AppTarget]) -> String {
        let items = stopped.values.sorted { $0.name < $1.name }.compactMap { target -> String? in
            guard case .unix(let socket) = target.address, let unit = target.unit else { return nil }
            return "{\"app\":\(JSONText.quoted(target.name)),\"socket\":\(JSONText.quoted(socket)),\"unit\":\(JSONText.quoted(unit))}"
        }
        return "{\"stopped\":[" + items.joined(separator: ",") + "]}\n"
    }

    /// Saves the stopped applications when they changed, on `blocking`'s threads.
    func persist(with blocking: BlockingCalls) async {
        await file?.saveChanges(of: state, changed: \.changed, with: blocking) { Self.render($0.stopped) }
    }

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
            if up, state.stopped.removeValue(forKey: app) != nil { state.changed = true }
            return true
        }
    }

    /// `target` stopped while its unit (`target.unit`) stays enabled: a target, down, from now on.
    func stop(_ target: AppTarget) {
        state.withLock { state in
            guard state.stopped[target.name] != target, state.stopped[target.name] != nil || state.stopped.count < Self.maxApps else { return }
            state.stopped[target.name] = target
            state.changed = true
        }
    }

    /// No longer keeps `app` as stopped (its unit was started, disabled or removed): the next
    /// listing finds its socket again, or finds it gone and says it left.
    func release(_ app: String) {
        state.withLock { state in
            if state.stopped.removeValue(forKey: app) != nil { state.changed = true }
        }
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
            if state.stopped.removeValue(forKey: app) != nil { state.changed = true }
        }
    }
}
