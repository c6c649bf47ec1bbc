public import WeaveSupport

extension WeaveEvent {
    public static let healthTransition = WeaveEvent(messageID: "d47c2ece5e194c99bc8756c4e375df39", title: "health transition")

    /// The events a `HealthMonitor` logs.
    public static let healthEvents: [WeaveEvent] = [.healthTransition]
}
