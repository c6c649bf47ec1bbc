import Logging
import WeaveHealthServer
import WeaveSupport

/// The applications' directory as the daemon lists it: a target per `<name>.sock` socket whose name
/// its user may claim (`AppOwners`), not the daemon's own sockets. A directory that does not exist
/// holds no application; one that cannot be listed (out of descriptors, say) is not taken for
/// empty: the sockets of its last listing stay, and the failure is logged once, so a passing
/// failure never reports every application gone.
final class AppDirectory: Sendable {
    let path: String
    let owners: AppOwners
    /// The paths of the daemon's own Unix socket listeners: a socket in the directory that is one of
    /// them (a link to it, say) is the daemon itself, which would wait on its own `/metrics` and
    /// report itself as its own component.
    let ownSockets: [String]
    let logger: Logger
    /// The sockets the directory held when it was last listed, and why the last listing failed.
    private let listing = Locked<(found: [AppTarget], failure: String?)>(([], nil))
    /// The daemon's own sockets found in it, logged once each.
    private let skippedOwn = Locked<Set<String>>([])

    init(path: String, owners: AppOwners, ownSockets: [String], logger: Logger) {
        self.path = path
        self.owners = owners
        self.ownSockets = ownSockets
        self.logger = logger
    }

    /// The sockets of the last listing.
    var found: [AppTarget] { listing.withLock { $0.found } }

    /// Whether the last listing admitted `target`'s socket at its address.
    func admits(_ target: AppTarget) -> Bool {
        listing.withLock { $0.found.contains { $0.name == target.name && $0.address == target.address } }
    }

    /// Lists the directory now: its sockets, sorted by name; those of the last listing when it cannot be listed.
    func list() -> [AppTarget] {
        let files: [String]
        switch directoryNames(path) {
        case .success(let names): files = names
        case .failure(let error) where error.code == ENOENT: return note([], failure: nil)
        case .failure(let error): return note(nil, failure: SystemError.text(error.code))
        }
        let own = ownFiles
        var found: [AppTarget] = []
        let present = Set(files.filter { $0.hasSuffix(AppSocket.suffix) }.map { String($0.dropLast(AppSocket.suffix.count)) })
        for file in files {
            guard file.hasSuffix(AppSocket.suffix) else { continue }
            let name = String(file.dropLast(AppSocket.suffix.count))
            let socket = path + "/" + file
            var status = stat(), link = stat()
            guard AppSocket.isValidName(name), stat(socket, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK,
                  lstat(socket, &link) == 0 else { continue }
            // The name belongs to the user whose socket first claimed it. A link counts only to a
            // socket of its own maker: the daemon connects where it points, and must not lend its
            // access to a socket the link's maker could not reach (or publish another's under a new name).
            let uid = link.st_mode & S_IFMT == S_IFLNK && link.st_uid != status.st_uid ? nil : status.st_uid
            guard owners.admit(name, uid: uid, linkOwner: link.st_uid, path: socket, present: present) else { continue }
            if own.contains(where: { $0.st_dev == status.st_dev && $0.st_ino == status.st_ino }) {
                if skippedOwn.withLock({ $0.insert(socket).inserted }) {
                    logger.warning("\(socket) is weave-healthd's own socket, not an application's; it is skipped", metadata: ["path": "\(socket)"])
                }
                continue
            }
            found.append(AppTarget(name: name, address: .unix(path: socket), host: "localhost", pathPrefix: ""))
        }
        return note(found.sorted { $0.name < $1.name }, failure: nil)
    }

    /// The files of the daemon's own sockets, as they are now (a restart of its listener makes another).
    private var ownFiles: [stat] {
        ownSockets.compactMap { path in
            var status = stat()
            return stat(path, &status) == 0 ? status : nil
        }
    }

    /// Records a listing (`found`), or a failed one (nil, with why); returns the sockets to use.
    private func note(_ found: [AppTarget]?, failure: String?) -> [AppTarget] {
        let (sockets, previous) = listing.withLock { listing -> ([AppTarget], String?) in
            let previous = listing.failure
            listing.failure = failure
            if let found { listing.found = found }
            return (listing.found, previous)
        }
        if let failure, failure != previous {
            let kept = "the \(sockets.count) applications it last held stay"
            logger.warning("Cannot list the applications' directory \(path): \(failure); \(kept)",
                           metadata: ["directory": "\(path)", "reason": "\(failure)"])
        } else if failure == nil, previous != nil {
            logger.notice("The applications' directory \(path) is listed again", metadata: ["directory": "\(path)"])
        }
        return sockets
    }
}
