import WeaveSupport

/// Where the daemon is in each application's `/events`, kept across its restarts (an upgrade, the
/// watchdog, a crash) in its state directory: `$STATE_DIRECTORY/event-positions.json`
/// (`StateDirectory=weave-healthd`: /var/lib/weave-healthd). A restarted daemon goes on after the
/// last event the previous one wrote, so events made while no daemon ran are written once, late,
/// and none twice; events an application's log dropped meanwhile are counted in one entry.
///
/// Written after each round that moved a position, to a temporary file renamed over the old one,
/// so the file is always whole. A file that cannot be read is logged and not used: the daemon then
/// starts as a first start does.
struct EventPositions: Sendable {
    /// One application's place: its log's `started` (another value is another run of it) and the
    /// last number written.
    struct Place: Equatable, Sendable {
        var started: Double
        var last: UInt64
    }

    let path: String

    static let fileName = "event-positions.json"
    /// The most a file may hold: `AppEventJournal.maxApps` places of the longest names, and room.
    static let maxBytes = 4 << 20

    /// The file in `$STATE_DIRECTORY` (its first directory, when systemd lists several); nil when
    /// the variable is unset or not an absolute path (a daemon started by hand keeps no state).
    static func fromEnvironment() -> EventPositions? {
        guard let value = getenv("STATE_DIRECTORY").map({ String(cString: $0) }),
              let first = value.split(separator: ":").first, first.hasPrefix("/") else { return nil }
        return EventPositions(path: first + "/" + fileName)
    }

    /// The places the file holds: nil when there is no file (a first start), an error when there
    /// is one that is not a file of places.
    func load() -> Result<[String: Place]?, FileReadError> {
        switch readRegularFile(path, limit: Self.maxBytes) {
        case .failure where errno == ENOENT:
            return .success(nil)
        case .failure(let error):
            return .failure(error)
        case .success(let bytes):
            guard let places = Self.parse(bytes) else { return .failure(FileReadError("it is not a file of event positions")) }
            return .success(places)
        }
    }

    /// `{"apps":{"orders":{"started":1764316800.25,"last":42},…}}`; nil for anything else.
    static func parse(_ bytes: [UInt8]) -> [String: Place]? {
        guard case .object(let members)? = JSONValue.parse(bytes)?["apps"], members.count <= AppEventJournal.maxApps else { return nil }
        var places: [String: Place] = [:]
        for (app, value) in members {
            guard !app.isEmpty, places[app] == nil, let started = value["started"]?.number, started.isFinite,
                  let last = value["last"]?.number, last >= 0, last <= 9_007_199_254_740_992, last.rounded() == last else { return nil }
            places[app] = Place(started: started, last: UInt64(last))
        }
        return places
    }

    static func render(_ places: [String: Place]) -> String {
        let members = places.sorted { $0.key < $1.key }.map { app, place in
            "\(JSONText.quoted(app)):{\"started\":\(place.started),\"last\":\(place.last)}"
        }
        return "{\"apps\":{" + members.joined(separator: ",") + "}}\n"
    }

    /// Replaces the file with `places`: written beside it, flushed, then renamed over it.
    func save(_ places: [String: Place]) -> Result<Void, FileReadError> {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return .failure(FileReadError("cannot write \(temporary): \(SystemError.text(errno))")) }
        var bytes = Array(Self.render(places).utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                let reason = SystemError.text(errno)
                close(fd)
                unlink(temporary)
                return .failure(FileReadError("cannot write \(temporary): \(reason)"))
            }
            written += count
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            let reason = SystemError.text(errno)
            unlink(temporary)
            return .failure(FileReadError("cannot replace \(path): \(reason)"))
        }
        return .success(())
    }
}
