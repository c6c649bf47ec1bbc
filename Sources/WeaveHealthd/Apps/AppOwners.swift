import Logging
import WeaveHealthServer
import WeavePrometheus
import WeaveSupport

/// Which user owns each application name: the owner of the first socket the daemon found under it.
/// A later socket under that name owned by another user is refused, and so is a link to another
/// user's socket: in the shared discovery directory (sticky, so only a socket's owner may remove
/// it), a process of another user in group `weave` cannot take over a name after its application
/// stops. Every refusal is logged and counted once per name and user, with its reason.
///
/// A binding is never forgotten for another user's benefit: each user binds at most
/// `maxNamesPerUser` names, and a user at that bound has only its own names whose socket is gone
/// forgotten. The bindings are kept in the state directory (`app-owners.json`), so that a name is
/// not vacant while the daemon restarts (an upgrade). Process-wide, so a reload keeps them.
final class AppOwners: Sendable {
    /// Names one user may bind.
    static let maxNamesPerUser = 4_096
    /// Names bound in all, and claims logged, at most.
    static let maxNames = 16_384
    static let fileName = "app-owners.json"
    static let what = "the owners of the application names"

    /// Why a claim was refused: the `reason` label.
    enum Refusal: String, CaseIterable {
        /// The name belongs to another user.
        case owner
        /// A link to another user's socket.
        case link
        /// The user, or every user together, bound as many names as allowed.
        case full
    }

    private struct State {
        var owners: [String: UInt32] = [:]
        /// How many names each user has bound.
        var perUser: [UInt32: Int] = [:]

        mutating func count() {
            perUser = owners.values.reduce(into: [:]) { $0[$1, default: 0] += 1 }
        }
        var refused: [Refusal: Int] = [:]
        var logged: Set<String> = []
        var changed = false
    }

    private let state = Locked(State())
    private let file: StateFile?
    private let logger: Logger

    /// Reads the bindings `file` keeps (a blocking read: at startup).
    init(file: StateFile? = nil, logger: Logger = Logger(label: "weave.healthd.apps")) {
        self.file = file
        self.logger = logger
        if let owners = file?.load(consequence: "names are bound anew as their sockets are found", Self.parse) {
            state.withLock { state in
                state.owners = owners
                state.count()
            }
        }
    }

    /// `{"owners":[{"app":"orders","uid":1001},…]}`; nil for anything else.
    static func parse(_ bytes: [UInt8]) -> [String: UInt32]? {
        guard case .array(let items)? = JSONValue.parse(bytes)?["owners"], items.count <= maxNames else { return nil }
        var owners: [String: UInt32] = [:]
        for item in items {
            guard let app = item["app"]?.string, AppSocket.isValidName(app), owners[app] == nil,
                  let uid = item["uid"]?.number, let owner = UInt32(exactly: uid) else { return nil }
            owners[app] = owner
        }
        return owners
    }

    static func render(_ owners: [String: UInt32]) -> String {
        let items = owners.sorted { $0.key < $1.key }.map { "{\"app\":\(JSONText.quoted($0.key)),\"uid\":\($0.value)}" }
        return "{\"owners\":[" + items.joined(separator: ",") + "]}\n"
    }

    /// Saves the bindings when they changed, on `blocking`'s threads.
    func persist(with blocking: BlockingCalls) async {
        await file?.saveChanges(of: state, changed: \.changed, with: blocking) { Self.render($0.owners) }
    }

    /// The user that owns `name`, if it is bound.
    func owner(of name: String) -> UInt32? {
        state.withLock { $0.owners[name] }
    }

    /// Whether the socket at `path`, owned by `uid`, may serve `name` (binding the name to `uid`
    /// when it is new); a nil `uid` is a link by `linkOwner` to another user's socket, never served.
    /// `present` are the names the directory holds now: a user at its bound has its own others forgotten.
    func admit(_ name: String, uid: UInt32?, linkOwner: UInt32, path: String, present: Set<String>) -> Bool {
        let (refusal, owner, new) = state.withLock { state -> (Refusal?, UInt32?, Bool) in
            let owner = state.owners[name]
            if let uid, owner == uid { return (nil, owner, false) }
            var refusal = Refusal.link
            if let uid, owner == nil {
                if Self.hasRoom(for: uid, in: state) || forgetGone(of: uid, in: &state, present: present) {
                    state.owners[name] = uid
                    state.perUser[uid, default: 0] += 1
                    state.changed = true
                    return (nil, uid, false)
                }
                refusal = .full
            } else if uid != nil {
                refusal = .owner
            }
            // Counted and logged once per name and claimant.
            let claim = "\(name)\u{0}\(uid.map(String.init) ?? "link \(linkOwner)")"
            guard state.logged.count < Self.maxNames, state.logged.insert(claim).inserted else { return (refusal, owner, false) }
            state.refused[refusal, default: 0] += 1
            return (refusal, owner, true)
        }
        guard let refusal else { return true }
        if new { log(refusal, name: name, uid: uid, linkOwner: linkOwner, owner: owner, path: path) }
        return false
    }

    /// Forgets `uid`'s names whose socket is gone; whether it may then bind one more.
    private func forgetGone(of uid: UInt32, in state: inout State, present: Set<String>) -> Bool {
        let before = state.owners.count
        state.owners = state.owners.filter { $0.value != uid || present.contains($0.key) }
        state.count()
        if state.owners.count < before { state.changed = true }
        return Self.hasRoom(for: uid, in: state)
    }

    private static func hasRoom(for uid: UInt32, in state: State) -> Bool {
        state.owners.count < maxNames && state.perUser[uid, default: 0] < maxNamesPerUser
    }

    private func log(_ refusal: Refusal, name: String, uid: UInt32?, linkOwner: UInt32, owner: UInt32?, path: String) {
        let metadata: Logger.Metadata = ["app": "\(name)", "path": "\(path)", "uid": "\(uid ?? linkOwner)",
                                         "owner_uid": "\(owner.map(String.init) ?? "none")", "reason": "\(refusal.rawValue)"]
        switch refusal {
        case .owner:
            logger.error("Refused \(path): the application name \(name) belongs to uid \(owner.map(String.init) ?? "?"), and this socket is owned by uid \(uid ?? linkOwner)",
                         metadata: WeaveEvent.appRefused.metadata(metadata))
        case .link:
            logger.error("Refused \(path): a link made by uid \(linkOwner) to a socket of another user",
                         metadata: WeaveEvent.appRefused.metadata(metadata))
        case .full:
            logger.error("Refused \(path): uid \(uid ?? linkOwner) has bound \(Self.maxNamesPerUser) application names, or all users \(Self.maxNames), whose sockets are present",
                         metadata: WeaveEvent.appRefused.metadata(metadata))
        }
    }

    /// `weave_app_sockets_refused_total{reason}`, each reason from 0.
    func family() -> MetricFamily {
        let refused = state.withLock { $0.refused }
        return .counter("weave_app_sockets_refused",
                        "Claims of an application name refused, each name and user once, by reason: owner (a socket of another user than the name's), link (a link to another user's socket), full (the user's or all users' bound on names).",
                        Refusal.allCases.map { ([("reason", $0.rawValue)], Double(refused[$0] ?? 0)) })
    }
}
