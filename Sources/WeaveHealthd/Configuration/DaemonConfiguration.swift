import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveMemoryPressure
import WeaveObservability
import WeavePrometheus
import WeaveSupport

/// A validated configuration of weave-healthd. What a file leaves out is the library's own default,
/// taken from the library (the container's settings, the health policy, the memory-pressure watch),
/// so each default has one home; the daemon's own are in `Defaults`.
struct DaemonConfiguration: Sendable {
    var listeners: [Listener] = [.tcp(host: "127.0.0.1", port: Defaults.port)]
    var detailsPolicy: DetailsPolicy?
    var bearerTokenFile: String?
    /// The token read from `bearerTokenFile` (by `ConfigurationLoader.load`), without surrounding whitespace.
    var bearerToken: String?
    var slowResolutionThreshold = InstrumentationSettings.default.slowResolutionThreshold
    var memoryPressureTrigger = MemoryPressureConfiguration().trigger
    var statusCodes = HealthPolicy().statusCodes
    /// Records per service and window for slow-resolution and resolution-error logs.
    var logRateLimit = InstrumentationSettings.default.logRateLimit
    var checks: [CheckConfiguration] = []
    /// The applications whose endpoints are aggregated.
    var apps = AppsConfiguration()
    /// Which of the daemon's own dependencies keep their latency buckets in `/metrics`.
    var resolveBuckets = ResolveBuckets.default
    /// The directory of `*.prom` files read at every scrape; nil for none.
    var textfile: TextfileConfiguration? = nil
    /// Where each top-level key's value is in the file (line, column), for errors about it after
    /// loading (a reload's refusal).
    var positions: [String: (line: Int, column: Int)] = [:]

    /// The daemon container's instrumentation settings (each runtime's container has its own).
    var instrumentation: InstrumentationSettings {
        InstrumentationSettings(slowResolutionThreshold: slowResolutionThreshold, logRateLimit: logRateLimit)
    }

    /// What the endpoints decide from this configuration, for the server's `listeners` (the
    /// configured ones, or those systemd passed): `details:` by default by whether they are local.
    func policy(listeners: [Listener]) -> HealthPolicy {
        HealthPolicy(detailsPolicy: detailsPolicy ?? .default(for: listeners), bearerToken: bearerToken, statusCodes: statusCodes)
    }
}

/// One configured check.
struct CheckConfiguration: Sendable {
    var name: String
    /// The type's options (`TCPCheck.Options`, …): they make the check.
    var options: any CheckOptions
    var settings: HealthCheckSettings
}

/// An `http://host:port/path` URL, parsed without Foundation.
struct HTTPURL: Sendable, Equatable {
    var host: String
    var port: Int
    var path: String
    /// `https://`: only the http check speaks TLS.
    var secure: Bool

    /// The `Host` header: the port only when it is not the scheme's, IPv6 literals bracketed.
    var hostHeader: String {
        port == (secure ? 443 : 80) ? (host.contains(":") ? "[\(host)]" : host) : HostPort.format(host: host, port: port)
    }

    /// The URL as written: `https://host:port/path`.
    var description: String { (secure ? "https://" : "http://") + hostHeader + path }

    init?(_ text: String) {
        secure = text.hasPrefix("https://")
        guard secure || text.hasPrefix("http://") else { return nil }
        let rest = text.dropFirst(secure ? "https://".count : "http://".count)
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let (host, port) = HostPort.parse(rest[..<authorityEnd], defaultPort: secure ? 443 : 80) else { return nil }
        self.host = host
        self.port = port
        path = authorityEnd == rest.endIndex ? "/" : String(rest[authorityEnd...])
    }
}
