import WeaveSupport

/// How each application answered each path when last asked, which orders the next round
/// (`order`), and the side requests still running apart from their round (`startApart`).
final class AppAnswers: Sendable {
    /// How an application's last request for a path went.
    enum Last: Sendable {
        case answered
        /// Failed after a connection, or by its deadline: it may take its whole time again.
        case failed
        /// Refused at once: nobody listens on its socket (a stale one), or it is gone. It costs the
        /// next round no time, so it takes no share of the budget from the others (#64: 4,096
        /// stale sockets cut every request's share to 19 ms).
        case refused
    }

    /// How the last request for each path actually sent to each application went (one the budget
    /// left unasked does not count), by path and application; none before the first.
    private let last = Locked<[String: [String: Last]]>([:])
    /// Requests of a side endpoint (`/events`, `/dependencies`) to applications that failed it when
    /// last asked, which their round does not wait for, by path and application.
    private let apart = Locked<Set<String>>([])

    /// Records how `app`'s request for `path` went.
    func record(_ answer: Last, path: String, app: String) {
        last.withLock { $0[path, default: [:]][app] = answer }
    }

    /// Forgets, for `path`, the applications not in `names`.
    func keep(_ names: Set<String>, path: String) {
        last.withLock { $0[path] = $0[path]?.filter { names.contains($0.key) } }
    }

    /// The names among `targets` whose last request for `path` did not get an answer.
    func unanswered(_ targets: [AppTarget], path: String) -> Set<String> {
        last.withLock { last in
            Set(targets.filter { last[path]?[$0.name].map { $0 != .answered } ?? false }.map(\.name))
        }
    }

    /// The indices of `targets` in the order to ask them for `path`: those that answered it when last
    /// asked, then those not asked yet, then those that failed, then those refused at once, each in
    /// target order; and, at each place in that order, how many from there on may take their time
    /// (all but those refused). Applications that hang hold a request slot for their whole time:
    /// asked first, enough of them would spend the budget before a healthy application was asked,
    /// at every scrape. (Each one's time is its share of the budget, `AppFleet.ask`, so that even the
    /// first round, in name order, asks every one.)
    func order(_ targets: [AppTarget], path: String) -> (order: [Int], costly: [Int]) {
        let answers = last.withLock { last in targets.map { last[path]?[$0.name] } }
        func rank(_ index: Int) -> Int {
            switch answers[index] {
            case .answered?: 0
            case nil: 1
            case .failed?: 2
            case .refused?: 3
            }
        }
        let order = targets.indices.sorted { (rank($0), $0) < (rank($1), $1) }
        var costly = [Int](repeating: 0, count: order.count + 1)
        for place in order.indices.reversed() { costly[place] = costly[place + 1] + (answers[order[place]] == .refused ? 0 : 1) }
        return (order, costly)
    }

    /// Whether a request apart named `key` may start: not while its last one runs, nor past `limit`
    /// running. `endApart` when it ends.
    func startApart(_ key: String, limit: Int) -> Bool {
        apart.withLock { running in running.count < limit && running.insert(key).inserted }
    }

    func endApart(_ key: String) {
        apart.withLock { _ = $0.remove(key) }
    }
}
