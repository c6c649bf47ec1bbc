#if canImport(Glibc)
import Glibc
#endif

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
        var host: Substring
        var port = 80
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let value = Int(authority[authority.index(after: colon)...]) else { return nil }
            port = value
        } else {
            host = authority
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self = .tcp(host: String(host), port: port)
    }

    /// The `Host` header: IPv6 literals bracketed, the port always (a bare `:port` is never sent).
    var hostHeader: String {
        switch self {
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
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
            guard !line.trimmingSpaces.isEmpty else { continue }
            if !line.hasPrefix(" ") && !line.hasPrefix("-") {
                inListen = line.hasPrefix("listen:")
                continue
            }
            guard inListen else { continue }
            var item = line.trimmingSpaces
            if item.hasPrefix("- ") { item = String(item.dropFirst(2)).trimmingSpaces }
            item = item.replacing("{", with: "").replacing("}", with: "")
            for field in item.split(separator: ",") {
                let parts = field.split(separator: ":", maxSplits: 1).map { String($0).trimmingSpaces.unquoted }
                guard parts.count == 2 else { continue }
                if parts[0] == "unix" { return .unix(path: parts[1]) }
                if parts[0] == "address" { return ProbeTarget(url: "http://" + parts[1]) }
            }
        }
        return daemonDefault
    }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" || first == "\n" || first == "\r\n" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\n" || last == "\r" || last == "\r\n" { text = text.dropLast() }
        return String(text)
    }

    var unquoted: String {
        guard count >= 2, let first, first == last, first == "\"" || first == "'" else { return self }
        return String(dropFirst().dropLast())
    }
}
