import Logging

/// The events WeaveDI and weave-healthd log, each with a stable 128-bit `MESSAGE_ID` that journald
/// catalogs explain (`systemd/weave-healthd.catalog`; `journalctl -x` shows the entry). Log records
/// carry it as the metadata key `message_id`.
public enum WeaveEvent: String, CaseIterable, Sendable {
    case slowResolution = "735c7427772241aba150555de1608eb8"
    case resolutionError = "00f18f663af544d787af7808aa6dc0b3"
    case memoryPressure = "170f0bbb8c824ee78108e74c72f0a6aa"
    case healthTransition = "d47c2ece5e194c99bc8756c4e375df39"
    case configReloaded = "75cb642318bb428194704fe884012e0e"
    case configRejected = "22e5c241606b4360b398f1213e3cca26"
    case startup = "3bbd3ed272c649f0bf8073cef7bd24fb"
    case shutdown = "84ca65ae614e4623bbdbe8acd2af08f2"

    /// A short human name, such as "slow resolution".
    public var title: String {
        switch self {
        case .slowResolution: "slow resolution"
        case .resolutionError: "resolution error"
        case .memoryPressure: "memory pressure"
        case .healthTransition: "health transition"
        case .configReloaded: "configuration reloaded"
        case .configRejected: "configuration rejected"
        case .startup: "startup"
        case .shutdown: "shutdown"
        }
    }

    /// The journald `MESSAGE_ID`: 32 lower-case hex digits.
    public var messageID: String { rawValue }

    /// `["message_id": …]`, the metadata that marks a log record as this event.
    public var metadata: Logger.Metadata { ["message_id": .string(rawValue)] }

    /// `fields` plus this event's `message_id`.
    public func metadata(_ fields: Logger.Metadata) -> Logger.Metadata {
        metadata.merging(fields) { $1 }
    }
}
