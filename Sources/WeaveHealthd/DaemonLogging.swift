import Logging
import WeaveSupport
import WeaveSystemd

/// The daemon's logging, from `WEAVE_LOG_LEVEL` (info by default) and `WEAVE_LOG_TARGET` (auto,
/// journal or stderr): every handler writes through one `JournalWriter`, in order.
enum DaemonLogging {
    /// Bootstraps swift-log; returns the one writer, which shutdown flushes. Exits with 64 on a bad target.
    static func bootstrap() -> JournalWriter {
        let level = getenv("WEAVE_LOG_LEVEL").flatMap { Logger.Level(rawValue: String(cString: $0)) } ?? .info
        let target: JournalLogHandler.Target
        switch getenv("WEAVE_LOG_TARGET").map({ String(cString: $0) }) ?? "auto" {
        case "auto": target = .automatic
        case "journal": target = .journal
        case "stderr": target = .standardError
        case let other: Daemon.fail("weave-healthd: WEAVE_LOG_TARGET must be auto, journal or stderr, not '\(other)'", Daemon.ExitCode.usage)
        }
        let journal = JournalWriter()
        LoggingSystem.bootstrap { label in
            var handler = JournalLogHandler(label: label, identifier: "weave-healthd", target: target, writer: journal)
            handler.logLevel = level
            return handler
        }
        return journal
    }
}
