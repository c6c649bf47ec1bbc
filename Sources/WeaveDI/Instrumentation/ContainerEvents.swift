import WeaveSupport

extension WeaveEvent {
    public static let slowResolution = WeaveEvent(messageID: "735c7427772241aba150555de1608eb8", title: "slow resolution")
    public static let resolutionError = WeaveEvent(messageID: "00f18f663af544d787af7808aa6dc0b3", title: "resolution error")

    /// The events a container logs.
    public static let containerEvents: [WeaveEvent] = [.slowResolution, .resolutionError]
}
