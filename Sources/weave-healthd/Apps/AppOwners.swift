import Logging
import WeavePrometheus
import WeaveSupport

/// Which user owns each application name: the owner of the first socket the daemon found under it.
/// A later socket under that name owned by another user is refused (logged and counted once per name
/// and user), and so is a link to another user's socket: in the shared discovery directory (sticky, so only a socket's owner may remove it),
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

    /// Whether the socket at `path`, owned by `uid`, may serve `name` (binding the name to `uid`
    /// when it is new); a nil `uid` is a link by `linkOwner` to another user's socket, never served.
    /// `present` are the names the directory holds now, kept when the bindings are full.
    func admit(_ name: String, uid: UInt32?, linkOwner: UInt32, path: String, present: Set<String>) -> Bool {
        let (admitted, owner, new) = state.withLock { state -> (Bool, UInt32?, Bool) in
            let owner = state.owners[name]
            if let uid, owner == uid { return (true, owner, false) }
            if let uid, owner == nil {
                if state.owners.count >= Self.maxNames { state.owners = state.owners.filter { present.contains($0.key) } }
                guard state.owners.count < Self.maxNames else { return (false, nil, false) }
                state.owners[name] = uid
                return (true, uid, false)
            }
            // Refused: counted and logged once per name and claimant.
            let claim = "\(name)\u{0}\(uid.map(String.init) ?? "link \(linkOwner)")"
            guard state.logged.count < Self.maxNames, state.logged.insert(claim).inserted else { return (false, owner, false) }
            state.refused += 1
            return (false, owner, true)
        }
        if new {
            let metadata: Logger.Metadata = ["app": "\(name)", "path": "\(path)", "uid": "\(uid ?? linkOwner)",
                                             "owner_uid": "\(owner.map(String.init) ?? "none")"]
            if let uid {
                logger.error("Refused \(path): the application name \(name) belongs to uid \(owner.map(String.init) ?? "?"), and this socket is owned by uid \(uid)",
                             metadata: WeaveEvent.appRefused.metadata(metadata))
            } else {
                logger.error("Refused \(path): a link made by uid \(linkOwner) to a socket of another user",
                             metadata: WeaveEvent.appRefused.metadata(metadata))
            }
        }
        return admitted
    }

    /// `weave_app_sockets_refused_total`.
    func family() -> MetricFamily {
        .counter("weave_app_sockets_refused",
                 "Claims of an application name refused, each name and user once: a socket of another user than the name's, or a link to another user's socket.",
                 [([], Double(state.withLock { $0.refused }))])
    }
}
