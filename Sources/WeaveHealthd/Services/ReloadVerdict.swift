import WeaveSupport

/// The running daemon's verdict on its last reload, in `$RUNTIME_DIRECTORY/reload-verdict`, for
/// `weave-healthd --reload PID` (the units' `ExecReload=`): that command sends the SIGHUP and waits
/// for the daemon itself to accept or reject the file, so `systemctl reload` fails exactly when the
/// daemon keeps its old configuration, and `weave_config_last_reload_successful` says the same. A
/// check of the file alone could not see what only the running daemon knows (its bound listeners,
/// its armed memory-pressure trigger), and left the metric at 1 for a file it refused.
///
/// The file is three fields and a message: `PID COUNT ok|rejected\nMESSAGE\n`, COUNT the reloads
/// this process has answered.
struct ReloadVerdict: Sendable {
    static let fileName = "reload-verdict"
    /// How long `--reload` waits for the verdict: the reload's own load deadline, and a margin.
    static let wait: Duration = ReloadService.loadDeadline + .seconds(5)

    let pid: Int32
    let count: UInt64
    let accepted: Bool
    let message: String

    var text: String { "\(pid) \(count) \(accepted ? "ok" : "rejected")\n\(message)\n" }

    /// The verdict a file holds; nil for anything else.
    init?(text: String) {
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let fields = lines[0].split(separator: " ")
        guard fields.count == 3, let pid = Int32(fields[0]), let count = UInt64(fields[1]),
              fields[2] == "ok" || fields[2] == "rejected" else { return nil }
        self.init(pid: pid, count: count, accepted: fields[2] == "ok",
                  message: lines.count > 1 ? String(lines[1].hasSuffix("\n") ? lines[1].dropLast() : lines[1]) : "")
    }

    init(pid: Int32, count: UInt64, accepted: Bool, message: String) {
        self.pid = pid
        self.count = count
        self.accepted = accepted
        self.message = message
    }

    /// The file in `$RUNTIME_DIRECTORY`; nil when the daemon was not started with one (by hand).
    static func file() -> StateFile? {
        StateFile.inDirectory(of: "RUNTIME_DIRECTORY", fileName, what: "the last reload's verdict")
    }

    /// What `file` holds now; nil when it holds nothing readable.
    static func read(_ file: StateFile) -> ReloadVerdict? {
        guard case .success(let text) = readTextFile(file.path, limit: 64 << 10) else { return nil }
        return ReloadVerdict(text: text)
    }

    /// `--reload PID`: sends SIGHUP to the daemon `PID` and waits for its verdict. Returns the exit
    /// status (0 accepted, 1 rejected or no verdict) and what to print.
    static func ask(pid argument: String) async -> (status: Int32, message: String) {
        guard let pid = Int32(argument), pid > 1 else {
            return (Daemon.ExitCode.usage, "weave-healthd: --reload needs the daemon's process id (systemd's $MAINPID), not '\(argument)'")
        }
        guard let file = file() else {
            return (Daemon.ExitCode.usage, "weave-healthd: --reload reads the daemon's verdict in $RUNTIME_DIRECTORY, which is not set: "
                + "it is the unit's ExecReload=; by hand, send SIGHUP and read the daemon's log")
        }
        let before = read(file).flatMap { $0.pid == pid ? $0.count : nil } ?? 0
        guard kill(pid, SIGHUP) == 0 else {
            return (1, "weave-healthd: cannot signal process \(pid): \(SystemError.text(errno))")
        }
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        while clock.now < deadline {
            if let verdict = read(file), verdict.pid == pid, verdict.count > before {
                return (verdict.accepted ? 0 : 1, verdict.message)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return (1, "weave-healthd: process \(pid) gave no verdict on the reload within \(wait.totalSeconds) s; see its log")
    }
}
