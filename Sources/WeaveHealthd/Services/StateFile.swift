import Logging
import WeaveSupport

/// One file in the daemon's state directory (`$STATE_DIRECTORY`; `StateDirectory=weave-healthd`,
/// /var/lib/weave-healthd), which outlives the daemon's restarts (an upgrade, the watchdog, a
/// crash): read once at startup, and replaced whole (written beside it, flushed, renamed over it),
/// so it is never half written. A save that fails is logged once, and once when saving works again.
final class StateFile: Sendable {
    let path: String
    /// What it keeps, for the log: "the applications' event positions".
    let what: String
    private let failing = Locked(false)
    /// Whether `saveChanges` is saving, and whether another call came meanwhile: one save at a time,
    /// the one under way saving again for those that came (a second at once was refused as busy,
    /// and logged as a failure).
    private let saving = Locked<(busy: Bool, again: Bool)>((false, false))
    private let logger: Logger

    /// The most a file may hold.
    static let maxBytes = 4 << 20

    init(path: String, what: String, logger: Logger = Logger(label: "weave.healthd.state")) {
        self.path = path
        self.what = what
        self.logger = logger
    }

    /// The file `name` in `$STATE_DIRECTORY` (its first directory, when systemd lists several); nil
    /// when the variable is unset or not an absolute path (a daemon started by hand keeps no state).
    static func inStateDirectory(_ name: String, what: String) -> StateFile? {
        inDirectory(of: "STATE_DIRECTORY", name, what: what)
    }

    /// The file `name` in the first directory the environment variable `variable` lists (systemd's
    /// `STATE_DIRECTORY`, `RUNTIME_DIRECTORY`); nil when it is unset or not an absolute path.
    static func inDirectory(of variable: String, _ name: String, what: String) -> StateFile? {
        guard let value = getenv(variable).map({ String(cString: $0) }),
              let first = value.split(separator: ":").first, first.hasPrefix("/") else { return nil }
        return StateFile(path: first + "/" + name, what: what)
    }

    /// What the file keeps, read with `parse`; nil when there is none (a first start), and when it
    /// cannot be read or `parse` refuses it, which is logged with `consequence` (the daemon goes on
    /// as on a first start). Blocking: at startup.
    func load<Value>(consequence: String, _ parse: ([UInt8]) -> Value?) -> Value? {
        let reason: FileReadError
        switch readRegularFile(path, limit: Self.maxBytes) {
        case .failure where errno == ENOENT:
            return nil
        case .failure(let error):
            reason = error
        case .success(let bytes):
            if let value = parse(bytes) { return value }
            reason = FileReadError("it is not a file of \(what)")
        }
        logger.warning("Cannot read \(what) in \(path): \(reason); \(consequence)")
        return nil
    }

    /// Saves `state` rendered by `render` when its `changed` mark is set, and clears the mark (set
    /// again when the save fails). A call while another saves leaves its change to that one, which
    /// saves again once done.
    func saveChanges<State>(of state: Locked<State>, changed: WritableKeyPath<State, Bool>, with blocking: BlockingCalls,
                            render: (State) -> String) async {
        guard saving.withLock({ saving in
            if saving.busy { saving.again = true }
            defer { saving.busy = true }
            return !saving.busy
        }) else { return }
        repeat {
            saving.withLock { $0.again = false }
            guard let text = state.withLock({ state -> String? in
                defer { state[keyPath: changed] = false }
                return state[keyPath: changed] ? render(state) : nil
            }) else { continue }
            if await !save(text, with: blocking) { state.withLock { $0[keyPath: changed] = true } }
        } while saving.withLock { saving in
            defer { if !saving.again { saving.busy = false } }
            return saving.again
        }
    }

    /// Replaces the file with `text`, on `blocking`'s threads; false when it could not (logged).
    func save(_ text: String, with blocking: BlockingCalls) async -> Bool {
        let path = self.path
        let outcome: Result<Void, FileReadError>
        do {
            outcome = try await blocking.run("state \(path)", lane: .files, deadline: .seconds(5)) { Self.replace(path, with: text) }
        } catch {
            outcome = .failure(FileReadError("\(error)"))
        }
        let wasFailing = failing.withLock { failing in
            defer { failing = (try? outcome.get()) == nil }
            return failing
        }
        switch outcome {
        case .success:
            if wasFailing { logger.notice("\(what) are saved again in \(path)") }
            return true
        case .failure(let error):
            if !wasFailing { logger.warning("Cannot save \(what): \(error); a restart would not know them") }
            return false
        }
    }

    /// Writes `text` beside `path`, flushes it, and renames it over `path`.
    static func replace(_ path: String, with text: String) -> Result<Void, FileReadError> {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return .failure(FileReadError("cannot write \(temporary): \(SystemError.text(errno))")) }
        var bytes = Array(text.utf8)
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
