import WeaveSupport

extension WeaveEvent {
    static let configReloaded = WeaveEvent(messageID: "75cb642318bb428194704fe884012e0e", title: "configuration reloaded")
    static let configRejected = WeaveEvent(messageID: "22e5c241606b4360b398f1213e3cca26", title: "configuration rejected")
    static let startup = WeaveEvent(messageID: "3bbd3ed272c649f0bf8073cef7bd24fb", title: "startup")
    static let shutdown = WeaveEvent(messageID: "84ca65ae614e4623bbdbe8acd2af08f2", title: "shutdown")

    static let appDown = WeaveEvent(messageID: "5d0f2c8a9b7e4e61a3c4f1d27b8e9a06", title: "application down")
    static let appUp = WeaveEvent(messageID: "c81e4f3a6d2b4b9f8e07a5c3d6f1b240", title: "application up")
    static let appLeft = WeaveEvent(messageID: "56060c2a39f44e0f81e9ddf8275e70a1", title: "application left")
    static let appRestarted = WeaveEvent(messageID: "016f57752f8a45dcbe4549e9a8abad08", title: "application restarted")
    static let appRefused = WeaveEvent(messageID: "5dae4959308142ad94b0c04993f09937", title: "application socket refused")
    static let appEventsMissed = WeaveEvent(messageID: "af025d5370e9400c833e14e271ef6b85", title: "application events missed")

    /// The events weave-healthd itself logs (its container and monitor log theirs too).
    static let daemonEvents: [WeaveEvent] = [
        .configReloaded, .configRejected, .startup, .shutdown, .appDown, .appUp, .appLeft, .appRestarted, .appRefused, .appEventsMissed,
    ]
}
