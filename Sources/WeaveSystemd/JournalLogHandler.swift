public import Logging
import WeaveSupport

/// A swift-log `LogHandler` that writes structured entries to journald with libsystemd's native
/// protocol, and falls back to one readable line on standard error when journald is not reachable.
/// It never blocks its caller: entries are handed to a `JournalWriter`, which delivers them from
/// threads of its own, in order, and counts what it had to redirect or drop.
///
/// Each entry carries `MESSAGE`, `PRIORITY` (from the level), `SYSLOG_IDENTIFIER`, `CODE_FILE`,
/// `CODE_LINE`, `CODE_FUNC` and the logger's label. Metadata becomes fields: nested values are
/// flattened (`request.path` → `WEAVE_REQUEST_PATH`, arrays by index), and every key is made a valid
/// journald name under `fieldPrefix` (see `JournalFieldName`), so no metadata can set `UNIT=` or a
/// trusted `_` field. Two keys are journald's own: `message_id` (32 hex digits) becomes `MESSAGE_ID`
/// and `errno` (a number, or a value conforming to `ErrnoCarrying`) becomes `ERRNO`.
public struct JournalLogHandler: LogHandler {
    /// Where entries go.
    public enum Target: Sendable {
        /// journald, with standard error as the fallback.
        case journal
        /// Standard error only, one line per entry.
        case standardError

        /// The journal when standard error is already connected to it (`$JOURNAL_STREAM`), standard
        /// error otherwise (a terminal, a pipe, a container log).
        public static var automatic: Target { Journal.standardErrorIsJournal ? .journal : .standardError }
    }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?

    /// The logger's label, sent as `<prefix>LOGGER`.
    public let label: String
    /// `SYSLOG_IDENTIFIER`, usually the program's name.
    public let identifier: String
    /// The prefix of every metadata field, a valid journald name such as `WEAVE_`.
    public let fieldPrefix: String
    public let target: Target
    /// Who delivers the entries.
    public let writer: JournalWriter

    public init(label: String, identifier: String, target: Target = .automatic, fieldPrefix: String = "WEAVE_",
                metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider, writer: JournalWriter) {
        precondition(JournalFieldName.isValid(fieldPrefix), "fieldPrefix must be a valid journald field name")
        self.label = label
        self.identifier = identifier
        self.target = target
        self.writer = writer
        self.fieldPrefix = fieldPrefix
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        let entry = JournalEntry(
            level: event.level, message: event.message.description, metadata: merged, label: label,
            identifier: identifier, file: event.file, function: event.function, line: event.line, fieldPrefix: fieldPrefix)
        switch target {
        case .journal: writer.submitToJournal(entry)
        case .standardError: writer.submitLine(entry)
        }
    }
}

/// A value that knows the errno behind it, sent as journald's `ERRNO` field.
public protocol ErrnoCarrying {
    var errnoValue: Int32 { get }
}
