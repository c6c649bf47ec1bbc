import WeaveSupport

/// The applications the daemon watches rather than polls: one request per application held open on
/// a connection of its own (`/events?after=…&wait=…`, answered when the application has a new event
/// or the wait ends; `AppHealthService.watch`). A health transition is an event, so it reaches the
/// daemon the moment the application records it, and `/health` is read then; the rounds of
/// `health_interval` ask only the applications not watched (an older library, a plain exposition,
/// one that refuses `/events`, one that does not answer its reads, or one whose watch just failed).
///
/// At most `capacity` watches at once (the descriptors `DescriptorBudget` leaves them); the rest are
/// polled. Shared by every runtime: a reload keeps the watches, each of which reads the current
/// runtime's fleet at every answer.
final class AppWatches: Sendable {
    /// One application's watch: its task, and whether its last request was answered as a watch.
    private struct Watch {
        let id: Int
        let task: Task<Void, Never>
        var watching = false
    }

    private let watches = Locked<(byApp: [String: Watch], started: Int)>(([:], 0))
    /// How many applications are watched at most.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 0)
    }

    /// The applications whose last watch request was answered as one: the rounds leave them out.
    func watched() -> Set<String> {
        watches.withLock { Set($0.byApp.filter(\.value.watching).keys) }
    }

    /// Records whether `app`'s last watch request was answered as one.
    func setWatching(_ app: String, _ watching: Bool) {
        watches.withLock { $0.byApp[app]?.watching = watching }
    }

    /// Starts a watch (`start`, given the watch's id) for each of `names` that has none, within
    /// `capacity`, and cancels those of applications not in `names` (they left, or a reload dropped them).
    func update(_ names: [String], start: (String, Int) -> Task<Void, Never>) {
        let present = Set(names)
        let cancelled = watches.withLock { watches -> [Task<Void, Never>] in
            let gone = watches.byApp.keys.filter { !present.contains($0) }
            let tasks = gone.compactMap { watches.byApp.removeValue(forKey: $0)?.task }
            for name in names where watches.byApp[name] == nil && watches.byApp.count < capacity {
                watches.started += 1
                watches.byApp[name] = Watch(id: watches.started, task: start(name, watches.started))
            }
            return tasks
        }
        for task in cancelled { task.cancel() }
    }

    /// Forgets the watch `id` of `app`, which ended by itself (a request failed, or its application
    /// left): the application is polled, and a round that finds it answering starts another watch.
    func ended(_ app: String, id: Int) {
        watches.withLock { watches in
            if watches.byApp[app]?.id == id { watches.byApp[app] = nil }
        }
    }

    /// Cancels every watch (graceful shutdown).
    func stopAll() {
        let tasks = watches.withLock { watches in
            defer { watches.byApp.removeAll() }
            return watches.byApp.values.map(\.task)
        }
        for task in tasks { task.cancel() }
    }
}
