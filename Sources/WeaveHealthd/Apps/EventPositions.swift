import WeaveSupport

/// Where the daemon is in each application's `/events`, as its state directory keeps it
/// (`event-positions.json`, a `StateFile`), so that a restarted daemon goes on after the last event
/// the previous one wrote: events made while no daemon ran are written once, late, and none twice;
/// events an application's log dropped meanwhile are counted in one entry.
enum EventPositions {
    /// One application's place: its log's `started` (another value is another run of it) and the
    /// last number written.
    struct Place: Equatable, Sendable {
        var started: Double
        var last: UInt64
    }

    static let fileName = "event-positions.json"
    static let what = "the applications' event positions"

    /// `{"apps":{"orders":{"started":1764316800.25,"last":42},…}}`; nil for anything else.
    static func parse(_ bytes: [UInt8]) -> [String: Place]? {
        guard case .object(let members)? = JSONValue.parse(bytes)?["apps"], members.count <= AppEventJournal.maxApps else { return nil }
        var places: [String: Place] = [:]
        for (app, value) in members {
            guard !app.isEmpty, places[app] == nil, let started = value["started"]?.epochSeconds,
                  let last = value["last"]?.number, last >= 0, last <= 9_007_199_254_740_992, last.rounded() == last else { return nil }
            places[app] = Place(started: started, last: UInt64(last))
        }
        return places
    }

    static func render(_ places: [String: Place]) -> String {
        let members = places.sorted { $0.key < $1.key }.map { app, place in
            "\(JSONText.quoted(app)):{\"started\":\(place.started),\"last\":\(place.last)}"
        }
        return "{\"apps\":{" + members.joined(separator: ",") + "}}\n"
    }
}
