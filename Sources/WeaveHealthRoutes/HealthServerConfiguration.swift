import WeaveSupport

/// Where the server listens.
public enum Listener: Sendable, Equatable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    /// A Unix socket; `mode` is applied with chmod before it listens (e.g. 0o660). A socket file
    /// another process listens on is an error; a leftover one nobody listens on is replaced. The
    /// file is removed when the server stops, unless another process has bound the path since.
    case unix(path: String, mode: UInt32)

    /// Loopback TCP addresses and Unix sockets are local; anything else is reachable from elsewhere.
    public var isLocal: Bool {
        switch self {
        case .tcp(let host, _): return host == "127.0.0.1" || host == "::1" || host == "localhost" || host.hasPrefix("127.")
        case .unix: return true
        }
    }

    /// The socket's path, for a Unix socket.
    public var unixPath: String? {
        if case .unix(let path, _) = self { path } else { nil }
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): return HostPort.format(host: host, port: port)
        case .unix(let path, _): return "unix:\(path)"
        }
    }
}

/// Which endpoints a listener serves (each `HealthRoute` names its roles). Sockets passed by systemd
/// pick theirs by `FileDescriptorName=`: `metrics` or `health`; any other name serves everything.
public enum ListenerRole: String, Sendable {
    case all
    /// What Prometheus scrapes: `/metrics`, and `/`.
    case metrics
    /// Everything but `/metrics`.
    case health

    public init(fileDescriptorName: String) {
        self = ListenerRole(rawValue: fileDescriptorName) ?? .all
    }
}

/// Whether health bodies include each check's output (its reason or error).
public enum DetailsPolicy: String, Sendable, CaseIterable {
    /// Never: reasons go to the log only.
    case never
    /// Always.
    case always
    /// Only for requests with `Authorization: Bearer <token>` matching the configured token.
    case whenAuthorized = "when-authorized"
}

/// Everything the HTTP endpoints need to know that is not health itself.
public struct HealthServerConfiguration: Sendable {
    public var listeners: [Listener]
    public var detailsPolicy: DetailsPolicy
    /// The policy for requests that came to a Unix socket listener; nil: `detailsPolicy`. An
    /// application's endpoint sets `.always`: its socket (mode 0660) reaches only its own user and
    /// the socket's group (the daemon's), so reasons reach the host's operator without being public.
    public var unixSocketDetailsPolicy: DetailsPolicy?
    /// The bearer token for `.whenAuthorized`.
    public var bearerToken: String?
    /// HTTP status for `/health` by aggregate: pass, warn, fail.
    public var statusCodes: (pass: Int, warn: Int, fail: Int)
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
    /// The least time between two `/metrics` renders of one format: a request that comes sooner
    /// waits for it to pass and shares the next render. Requests that arrive while one renders always
    /// share it; zero (the default) adds no wait.
    public var metricsReuse: Duration = .zero

    public init(listeners: [Listener], detailsPolicy: DetailsPolicy? = nil, unixSocketDetailsPolicy: DetailsPolicy? = nil,
                bearerToken: String? = nil,
                statusCodes: (pass: Int, warn: Int, fail: Int) = (200, 200, 503), maxHeaderBytes: Int = 8_192,
                maxBodyBytes: Int = 4_096, requestTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
                maxConnections: Int = 512, reservedConnections: Int = 16) {
        self.listeners = listeners
        // Details by default only where every listener is local; with no listener of its own (routes
        // mounted in an application's router) nobody can say who asks, so none.
        self.detailsPolicy = detailsPolicy ?? (!listeners.isEmpty && listeners.allSatisfy(\.isLocal) ? .always : .never)
        self.unixSocketDetailsPolicy = unixSocketDetailsPolicy
        self.bearerToken = bearerToken
        self.statusCodes = statusCodes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.reservedConnections = reservedConnections
    }
}
