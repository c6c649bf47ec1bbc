import WeaveSupport

/// Counts a server's open connections against a cap, keeping a reserve for probes.
///
/// Up to `maximum - reserved` connections are served normally. The last `reserved` are for the
/// probes an orchestrator must get through when the server is crowded (`/livez`, `/readyz`): on
/// them every other path is answered 503 and the connection closes. Beyond `maximum` a new
/// connection is closed at once. So idle or half-open connections can exhaust neither the
/// descriptors the process needs for its checks nor the liveness probe.
///
/// A crowded server makes room before it turns anyone away: a new connection that would land in
/// the reserve (or beyond) closes idle connections (waiting for a request, trickling one in, or not
/// reading their answer) until it can be served in full:
/// - first of the peer process (on a Unix socket, `SO_PEERCRED`) that holds the most connections,
///   while it holds more than the newcomer's would: one process cannot take every slot from another;
/// - then the connections idle longest, if for `evictionGrace`.
/// So a peer that opens hundreds of connections and sends nothing, or sends slowly, cannot keep a
/// client that asks at once (weave-healthd reading an application) from being served.
///
/// Busy connections cannot be closed to make room. So on a Unix socket, a connection of a user
/// (`SO_PEERCRED` uid) that holds fewer than `lightUser` connections is served in full even in the
/// reserve: another user's processes asking back to back on every slot cannot starve weave-healthd,
/// whose user asks an application for `/metrics`, `/health` and `/dependencies` at once at most.
public final class ConnectionLimiter: Sendable {
    /// What a new connection may do.
    public enum Admission: Sendable {
        case full
        case probesOnly
        case refused
    }

    /// One open connection: whether it is answering a request, since when it is in its state, and
    /// how to close it.
    final class Entry: Sendable {
        private let state = Locked<(busy: Bool, since: ContinuousClock.Instant)>((false, .now))
        private let closer: @Sendable () -> Void
        /// The peer's process ID on a Unix socket; -1 when unknown (TCP).
        let peer: Int32
        /// The peer's user on a Unix socket; nil when unknown (TCP).
        let user: UInt32?

        init(peer: Int32 = -1, user: UInt32? = nil, close: @escaping @Sendable () -> Void) {
            self.peer = peer
            self.user = user
            closer = close
        }

        /// Called by the connection's handlers as it moves between waiting and answering.
        func mark(busy: Bool) {
            state.withLock { $0 = (busy, .now) }
        }

        /// Since when it has been idle, or nil while it answers a request.
        var idleSince: ContinuousClock.Instant? {
            state.withLock { $0.busy ? nil : $0.since }
        }

        func close() { closer() }
    }

    public let maximum: Int
    public let reserved: Int
    /// Connections a user may hold and still be served in full in the reserve.
    static let lightUser = 3
    /// How long a connection must have been idle before a crowded server closes it for a new one.
    static let evictionGrace = Duration.milliseconds(500)
    private let open = Locked<[ObjectIdentifier: Entry]>([:])

    public init(maximum: Int, reserved: Int) {
        self.maximum = max(maximum, 1)
        self.reserved = min(max(reserved, 0), self.maximum - 1)
    }

    /// The connections open now.
    public var count: Int { open.withLock { $0.count } }

    /// Admits a new connection, closing the longest idle one first if the server is crowded; each
    /// admission but `.refused` must be paired with `release(_:)`.
    func admit(_ entry: Entry, now: ContinuousClock.Instant = .now) -> Admission {
        let (admission, evicted) = open.withLock { entries -> (Admission, [Entry]) in
            var evicted: [Entry] = []
            if entries.count >= maximum - reserved {
                // Idle connections, longest idle first.
                let idle = entries.compactMap { key, candidate -> (key: ObjectIdentifier, peer: Int32, since: ContinuousClock.Instant)? in
                    candidate.idleSince.map { (key, candidate.peer, $0) }
                }.sorted { $0.since < $1.since }
                // Those of the peer with the most connections, while it has more than the newcomer's would.
                if entry.peer >= 0 {
                    var held: [Int32: Int] = [:]
                    for candidate in entries.values where candidate.peer >= 0 { held[candidate.peer, default: 0] += 1 }
                    for connection in idle where entries.count >= maximum - reserved && connection.peer >= 0 {
                        let newcomer = (held[entry.peer] ?? 0) + 1
                        guard let most = held.values.max(), held[connection.peer] == most, most > newcomer else { continue }
                        if let closing = entries.removeValue(forKey: connection.key) {
                            evicted.append(closing)
                            held[connection.peer]! -= 1
                        }
                    }
                }
                // Then any idle for the grace.
                for connection in idle where entries.count >= maximum - reserved && now - connection.since >= Self.evictionGrace {
                    if let closing = entries.removeValue(forKey: connection.key) { evicted.append(closing) }
                }
            }
            guard entries.count < maximum else { return (.refused, evicted) }
            let light = entry.user.map { user in entries.values.count { $0.user == user } < Self.lightUser } ?? false
            entries[ObjectIdentifier(entry)] = entry
            return (entries.count > maximum - reserved && !light ? .probesOnly : .full, evicted)
        }
        // Outside the lock: closing schedules the close on each connection's event loop.
        for entry in evicted { entry.close() }
        return admission
    }

    /// The connection closed (a connection closed to make room was released already).
    func release(_ entry: Entry) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(entry)) }
    }
}
