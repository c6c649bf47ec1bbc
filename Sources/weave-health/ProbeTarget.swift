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

    /// The first listener of a weave-healthd configuration file (its `listen:` list), or the
    /// daemon's default when the file has none. Reads only what it needs, without a YAML library.
    static func fromDaemonConfiguration(_ text: String) -> ProbeTarget? {
        var inListen = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard !line.trimmingWhitespace().isEmpty else { continue }
            if !line.hasPrefix(" ") && !line.hasPrefix("-") {
                inListen = line.hasPrefix("listen:")
                continue
            }
            guard inListen else { continue }
            var item = line.trimmingWhitespace()
            if item.hasPrefix("- ") { item = String(item.dropFirst(2)).trimmingWhitespace() }
            item = item.replacing("{", with: "").replacing("}", with: "")
            for field in item.split(separator: ",") {
                let parts = field.split(separator: ":", maxSplits: 1).map { String($0).trimmingWhitespace().unquoted }
                guard parts.count == 2 else { continue }
                if parts[0] == "unix" { return .unix(path: parts[1]) }
                if parts[0] == "address" { return ProbeTarget(url: "http://" + parts[1]) }
            }
        }
        return daemonDefault
    }
}

extension String {
    var unquoted: String {
        guard count >= 2, let first, first == last, first == "\"" || first == "'" else { return self }
        return String(dropFirst().dropLast())
    }
}
