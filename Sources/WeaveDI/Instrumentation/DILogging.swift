import Logging
import Synchronization

/// Which container events are logged (through swift-log, label `weave.di`).
public enum LogLevel: Int, Sendable, CaseIterable {
    /// Everything: registrations, resolution details, warnings and errors.
    case all
    /// Registrations, warnings and errors.
    case registration
    /// Warnings and errors.
    case warnings
    /// Errors only.
    case errors
    /// Nothing.
    case off
}

/// The container's logger and its event filter.
enum DILog {
    private static let state = Locked<(level: LogLevel, logger: Logger)>((.warnings, Logger(label: "weave.di")))
    private static let levelValue = Atomic<Int>(LogLevel.warnings.rawValue)

    static func setLevel(_ level: LogLevel) {
        levelValue.store(level.rawValue, ordering: .relaxed)
        state.withLock {
            $0.level = level
            switch level {
            case .all, .registration: $0.logger.logLevel = .debug
            case .warnings: $0.logger.logLevel = .warning
            case .errors, .off: $0.logger.logLevel = .error
            }
        }
    }

    static var level: LogLevel { LogLevel(rawValue: levelValue.load(ordering: .relaxed)) ?? .warnings }

    /// Whether events of `category` pass the filter; cheap, for guarding message construction.
    @inline(__always)
    static func enabled(_ category: LogLevel) -> Bool {
        levelValue.load(ordering: .relaxed) <= category.rawValue
    }

    static func log(
        _ category: LogLevel, _ level: Logger.Level, _ message: @autoclosure () -> Logger.Message,
        metadata: @autoclosure () -> Logger.Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard enabled(category) else { return }
        let logger = state.withLock { $0.logger }
        logger.log(level: level, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs a record of `event` about `service` within the rate limit of `throttle` (the container's);
    /// once the limit's window ends, one record at the same level says how many were suppressed.
    static func throttled(
        _ event: WeaveEvent, service: String, _ category: LogLevel, _ level: Logger.Level,
        _ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata, throttle: LogThrottle,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard enabled(category) else { return }
        let admitted = throttle.admit("\(event.messageID) \(service)") { suppressed, window in
            log(category, level, "Suppressed \(suppressed) more \(event.title) records of \(service) in the last \(window)",
                metadata: event.metadata(["dependency": "\(service)", "suppressed": "\(suppressed)"]),
                file: file, function: function, line: line)
        }
        guard admitted else { return }
        log(category, level, message(), metadata: event.metadata(metadata()), file: file, function: function, line: line)
    }
}
