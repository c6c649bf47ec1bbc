import WeaveSupport

/// The `/events` document, written and read here only: an application's `ContainerEventLog` writes
/// it (`json(after:limit:)`), weave-healthd reads it (`ContainerEventPage(_:)`), and each kind's
/// fields (`Kind.fields`) are what both keep:
/// `{"started":…,"first":…,"next":…,"events":[{"seq":…,"time":…,"kind":…,"fields":{…}}]}`.
package struct ContainerEventPage {
    /// When the log began (one run of the application), in seconds since the Unix epoch.
    package let started: Double
    /// The first number the log still keeps, and the next it will give.
    package let first: UInt64
    package let next: UInt64
    package let events: [ContainerEventLog.Event]

    /// Nil unless it is a page: numbers in order, below `next`, at most `ContainerEventLog.maxPerRequest`
    /// events; events of unknown kinds are skipped, fields a kind does not carry left out, and field
    /// values made log-safe and cut to `ContainerEventLog.maxFieldBytes`.
    package init?(_ body: [UInt8]) {
        guard let document = JSONValue.parse(body), let started = document["started"]?.epochSeconds,
              let first = document["first"]?.number.flatMap(Self.count), let next = document["next"]?.number.flatMap(Self.count),
              first >= 1, first <= next, case .array(let items)? = document["events"],
              items.count <= ContainerEventLog.maxPerRequest else { return nil }
        var events: [ContainerEventLog.Event] = []
        var previous: UInt64 = 0
        for item in items {
            guard let sequence = item["seq"]?.number.flatMap(Self.count), sequence > previous, sequence < next,
                  let time = item["time"]?.epochSeconds, let name = item["kind"]?.string,
                  case .object(let members)? = item["fields"] else { return nil }
            previous = sequence
            guard let kind = ContainerEventLog.Event.Kind(rawValue: name) else { continue }
            var fields: [String: String] = [:]
            for (key, value) in members where kind.fields.contains(key) {
                guard let text = value.string else { return nil }
                fields[key] = text.logSafe.prefix(maxUTF8Bytes: ContainerEventLog.maxFieldBytes)
            }
            events.append(ContainerEventLog.Event(sequence: sequence, time: time, kind: kind, fields: fields))
        }
        self.started = started
        self.first = first
        self.next = next
        self.events = events
    }

    /// A whole, non-negative number that fits in 53 bits (JSON's exact integers).
    private static func count(_ number: Double) -> UInt64? {
        number >= 0 && number <= 9_007_199_254_740_992 && number.rounded() == number ? UInt64(number) : nil
    }
}

extension ContainerEventLog {
    /// `/events?after=N&limit=M`: the events numbered after `after`, at most `limit`, as the page above.
    public func json(after: UInt64, limit: Int) -> String {
        let (events, first, next) = events(after: after, limit: limit)
        var text = "{\"started\":\(started),\"first\":\(first),\"next\":\(next),\"events\":["
        for (index, event) in events.enumerated() {
            if index > 0 { text += "," }
            text += "{\"seq\":\(event.sequence),\"time\":\(event.time),\"kind\":\"\(event.kind.rawValue)\",\"fields\":{"
            text += event.fields.sorted { $0.key < $1.key }.map { "\(JSONText.quoted($0.key)):\(JSONText.quoted($0.value))" }
                .joined(separator: ",")
            text += "}}"
        }
        return text + "]}"
    }
}

extension ContainerEventLog.Event.Kind {
    /// The fields an event of this kind carries (the journal's `WEAVE_*` fields in lower case); a
    /// reader leaves out any other.
    public var fields: [String] {
        switch self {
        case .slowResolution: ["dependency", "duration_usec", "threshold_usec", "chain", "chain_usec", "self_usec", "slowest"]
        case .resolutionError: ["dependency", "error_kind", "error"]
        case .memoryPressure: []
        case .healthTransition: ["check", "state_from", "state_to", "reason"]
        case .startup: ["duration_usec", "runs", "chain", "chain_usec", "self_usec", "slowest"]
        }
    }
}
