public import WeaveSupport

extension WeaveEvent {
    public static let memoryPressure = WeaveEvent(messageID: "170f0bbb8c824ee78108e74c72f0a6aa", title: "memory pressure")

    /// The events a `MemoryPressureMonitor` logs.
    public static let pressureEvents: [WeaveEvent] = [.memoryPressure]
}
