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

/// What the endpoints decide that is not health itself, whatever server carries them: who sees
/// details, the `/health` status codes, how often `/metrics` renders. A reload may replace it
/// (`HealthRouter.reconfigure`); the transport (listeners, limits, timeouts) is the server's.
public struct HealthPolicy: Sendable {
    public var detailsPolicy: DetailsPolicy
    /// The policy for requests that came to a Unix socket listener; nil: `detailsPolicy`. An
    /// application's endpoint sets `.always`: its socket (mode 0660) reaches only its own user and
    /// the socket's group (the daemon's), so reasons reach the host's operator without being public.
    public var unixSocketDetailsPolicy: DetailsPolicy?
    /// The bearer token for `.whenAuthorized`.
    public var bearerToken: String?
    /// HTTP status for `/health` by aggregate: pass, warn, fail.
    public var statusCodes: (pass: Int, warn: Int, fail: Int)
    /// The least time between two `/metrics` renders of one format: a request that comes sooner
    /// waits for it to pass and shares the next render. Requests that arrive while one renders always
    /// share it; zero (the default) adds no wait.
    public var metricsReuse: Duration

    /// `detailsPolicy` `.never` by default: routes mounted in an application's router cannot say who
    /// asks (a server of its own defaults by its listeners, `DetailsPolicy.default(for:)`).
    public init(detailsPolicy: DetailsPolicy = .never, unixSocketDetailsPolicy: DetailsPolicy? = nil, bearerToken: String? = nil,
                statusCodes: (pass: Int, warn: Int, fail: Int) = (200, 200, 503), metricsReuse: Duration = .zero) {
        self.detailsPolicy = detailsPolicy
        self.unixSocketDetailsPolicy = unixSocketDetailsPolicy
        self.bearerToken = bearerToken
        self.statusCodes = statusCodes
        self.metricsReuse = metricsReuse
    }
}
