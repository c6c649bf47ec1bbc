/// The transport of a `HealthServer`: where it listens, and the limits and clocks of its
/// connections. Bound when it runs: a reload cannot change it (the router's `HealthPolicy` it can).
public struct HealthServerConfiguration: Sendable {
    public var listeners: [Listener]
    /// Request limits: header bytes, body bytes, and the time a request may take to arrive, from
    /// its first byte to its end.
    public var maxHeaderBytes: Int
    public var maxBodyBytes: Int
    public var requestTimeout: Duration
    /// A connection is closed when no request begins for this long, or when the client does not
    /// read an answer for this long.
    public var idleTimeout: Duration
    /// Open connections at most, of which the last `reservedConnections` answer only `/livez` and
    /// `/readyz` (see `ConnectionLimiter`). Keep it well under the descriptor limit (`LimitNOFILE=`).
    public var maxConnections: Int
    public var reservedConnections: Int

    public init(listeners: [Listener], maxHeaderBytes: Int = 8_192, maxBodyBytes: Int = 4_096, requestTimeout: Duration = .seconds(10),
                idleTimeout: Duration = .seconds(60), maxConnections: Int = 512, reservedConnections: Int = 16) {
        self.listeners = listeners
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.reservedConnections = reservedConnections
    }
}
