import WeaveReaders
import WeaveSupport

/// Where the daemon listens: `http://host:port` or a Unix socket.
enum ProbeTarget: Equatable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    /// weave-healthd's default listen address.
    static let daemonDefault = ProbeTarget.tcp(host: "127.0.0.1", port: 9096)

    /// `http://host[:port][/…]`, `http://[::1]:port`, or `unix:/path` (as `$WEAVE_HEALTH_URL` may say).
    init?(url: String) {
        if url.hasPrefix("unix:") {
            let path = String(url.dropFirst(5))
            guard path.hasPrefix("/") else { return nil }
            self = .unix(path: path)
            return
        }
        guard url.hasPrefix("http://") else { return nil }
        var authority = url.dropFirst(7)
        if let slash = authority.firstIndex(of: "/") { authority = authority[..<slash] }
        guard let (host, port) = HostPort.parse(authority, defaultPort: 80) else { return nil }
        self = .tcp(host: host, port: port)
    }

    /// The `Host` header: IPv6 literals bracketed, the port always (a bare `:port` is never sent).
    var hostHeader: String {
        switch self {
        case .tcp(let host, let port): return HostPort.format(host: host, port: port)
        case .unix: return "localhost"
        }
    }

    var description: String {
        switch self {
        case .tcp: return "http://\(hostHeader)"
        case .unix(let path): return "unix:\(path)"
        }
    }

    /// The first listener of a weave-healthd configuration file (its `listen:` list), read with the
    /// daemon's own YAML reader, or the daemon's default when the file has none; nil when its first
    /// listener is not an address or socket. Throws where the file is not YAML.
    static func fromDaemonConfiguration(_ text: String) throws(YAMLSyntaxError) -> ProbeTarget? {
        guard let root = try YAMLReader.parse(text) else { return daemonDefault }
        guard case .mapping(let top) = root.value else { return nil }
        guard let listen = top.first(where: { $0.key.scalar == "listen" })?.value else { return daemonDefault }
        guard case .sequence(let listeners) = listen.value, case .mapping(let fields) = listeners.first?.value else { return nil }
        for (key, value) in fields {
            guard let text = value.scalar else { continue }
            if key.scalar == "unix" { return .unix(path: text) }
            if key.scalar == "address" { return ProbeTarget(url: "http://" + text) }
        }
        return nil
    }
}

extension YAMLNode {
    /// The text of a scalar node; nil for a list or a mapping.
    fileprivate var scalar: String? {
        if case .scalar(let text) = value { return text }
        return nil
    }
}
