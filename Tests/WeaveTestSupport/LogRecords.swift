public import Logging
import Synchronization

/// What a logger was given, for the tests to read: `logger`'s records, in order.
public final class LogRecords: Sendable {
    public typealias Entry = (level: Logger.Level, message: String, metadata: Logger.Metadata)
    private let kept = Mutex<[Entry]>([])

    public init() {}

    /// A logger at trace level whose every record is kept here.
    public var logger: Logger {
        Logger(label: "test") { _ in Capture(records: self) }
    }

    public var entries: [Entry] { kept.withLock { $0 } }

    /// The records with `message_id` `messageID` whose metadata passes `filter`.
    public func count(_ messageID: String, _ filter: (Logger.Metadata) -> Bool = { _ in true }) -> Int {
        entries.filter { $0.metadata["message_id"] == .string(messageID) && filter($0.metadata) }.count
    }

    private struct Capture: LogHandler {
        let records: LogRecords
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
                 function: String, line: UInt) {
            records.kept.withLock { $0.append((level, "\(message)", metadata ?? [:])) }
        }
    }
}
