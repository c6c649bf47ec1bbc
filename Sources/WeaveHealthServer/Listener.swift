public import WeaveHealthRoutes
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

extension DetailsPolicy {
    /// Details by default only where every listener is local; with no listener (routes mounted in
    /// an application's router) nobody can say who asks, so none.
    public static func `default`(for listeners: [Listener]) -> DetailsPolicy {
        !listeners.isEmpty && listeners.allSatisfy(\.isLocal) ? .always : .never
    }
}
