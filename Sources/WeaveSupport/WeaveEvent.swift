public import Logging

/// A kind of event a program logs, with a stable 128-bit `MESSAGE_ID` that a journald catalog
/// explains (`journalctl -x` shows the entry). Log records carry it as the metadata key
/// `message_id`. Each module declares its own events as static members: WeaveDI the container's
/// (`containerEvents`), WeaveHealth the monitor's, WeaveMemoryPressure its own (`pressureEvents`), a
/// program its own.
public struct WeaveEvent: Sendable, Hashable {
    /// The journald `MESSAGE_ID`: 32 lower-case hex digits.
    public let messageID: String
    /// A short human name, such as "slow resolution".
    public let title: String

    public init(messageID: String, title: String) {
        precondition(messageID.utf8.count == 32 && messageID.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) },
                     "a MESSAGE_ID is 32 lower-case hex digits")
        self.messageID = messageID
        self.title = title
    }

    /// `["message_id": …]`, the metadata that marks a log record as this event.
    public var metadata: Logger.Metadata { ["message_id": .string(messageID)] }

    /// `fields` plus this event's `message_id`.
    public func metadata(_ fields: Logger.Metadata) -> Logger.Metadata {
        metadata.merging(fields) { $1 }
    }
}
