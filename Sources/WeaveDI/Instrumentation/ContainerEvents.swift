public import Logging
import WeaveSupport

extension WeaveEvent {
    public static let slowResolution = WeaveEvent(messageID: "735c7427772241aba150555de1608eb8", title: "slow resolution")
    public static let resolutionError = WeaveEvent(messageID: "00f18f663af544d787af7808aa6dc0b3", title: "resolution error")
    /// A container's startup ended (`Container.endStartup()`): its resolving time and slowest chain.
    public static let startupResolutions = WeaveEvent(messageID: "57b5cb60bf30423b9db33ca732852175", title: "startup resolutions")
    /// A log rate limit's summary of the records of one kind it did not write (`suppressedRecords`).
    public static let recordsSuppressed = WeaveEvent(messageID: "9e29899a6f2c4d94ab6b1a43c075903d", title: "records suppressed")

    /// The fields of a rate limit's summary, `fields` plus how many records of `event` were not
    /// written. A summary has its own `MESSAGE_ID`, so the catalog text of the records it stands
    /// for, whose fields it lacks, is not shown for it.
    public static func suppressedRecords(_ suppressed: Int, of event: WeaveEvent, _ fields: Logger.Metadata) -> Logger.Metadata {
        recordsSuppressed.metadata(fields.merging([
            "suppressed": "\(suppressed)", "suppressed_event": "\(event.title)", "suppressed_message_id": "\(event.messageID)",
        ]) { $1 })
    }

    /// The events a container logs.
    public static let containerEvents: [WeaveEvent] = [.slowResolution, .resolutionError, .startupResolutions, .recordsSuppressed]
}
