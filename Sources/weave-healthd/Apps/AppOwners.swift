import Logging
import WeavePrometheus
import WeaveSupport

/// Which user owns each application name: the owner of the first socket the daemon found under it.
/// A later socket under that name owned by another user is refused (logged once per name and user,
/// and counted): in the shared discovery directory (sticky, so only a socket's owner may remove it),
/// a process of another user in group `weave` cannot take over a name after its application stops.
/// Process-wide, so a reload keeps the bindings.
final class AppOwners: Sendable {
    /// Names bound at most; past it, the names whose socket is gone are forgotten first.
    static let maxNames = 4_096
    private let state = Locked<(owners: [String: UInt32], refused: Int, logged: Set<String>)>(([:], 0, []))
    private let logger: Logger

    init(logger: Logger = Logger(label: "weave.healthd.apps")) {
        self.logger = logger
    }

    /// Whether `uid` may serve `name` (binding the name to it when it is new). `present` are the
    /// names the directory holds now, kept when the bindings are full.
    func admit(_ name: String, uid: UInt32, path: String, present: Set<String>) -> Bool {
        let (admitted, log) = state.withLock { state -> (Bool, Bool) in
            if let owner = state.owners[name] {
                guard owner != uid else { return (true, false) }
                state.refused += 1
                return (false, state.logged.count < Self.maxNames && state.logged.insert("\(name)\u{0}\(uid)").inserted)
            }
            if state.owners.count >= Self.maxNames { state.owners = state.owners.filter { present.contains($0.key) } }
            guard state.owners.count < Self.maxNames else { return (false, false) }
            state.owners[name] = uid
            return (true, false)
        }
        if log {
            let owner = state.withLock { $0.owners[name] }.map(String.init) ?? "?"
            logger.error("Refused \(path): the application name \(name) belongs to uid \(owner), and this socket is owned by uid \(uid)",
                         metadata: WeaveEvent.appRefused.metadata(["app": "\(name)", "path": "\(path)", "uid": "\(uid)", "owner_uid": "\(owner)"]))
        }
        return admitted
    }

    /// `weave_app_sockets_refused_total`.
    func family() -> MetricFamily {
        .counter("weave_app_sockets_refused",
                 "Sockets in the discovery directory not served because another user owns the application name they claim.",
                 [([], Double(state.withLock { $0.refused }))])
    }
}
