import NIOCore
import NIOPosix
import WeaveSupport

/// Network errors in the words an operator reads: `connection refused (127.0.0.1:5432)`, not the
/// library's `NIOConnectionError(… SingleConnectionFailure(…))`.
enum NetworkFailure {
    static func reason(_ error: any Error, host: String, port: Int) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let failure = error.connectionErrors.first {
                return "\(cause(failure.error)) (\(HostPort.format(host: failure.target.ipAddress ?? host, port: port)))"
            }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "cannot resolve \(host)" }
            return "cannot connect to \(host):\(port)"
        default:
            return "\(cause(error)) (\(HostPort.format(host: host, port: port)))"
        }
    }

    /// `reason(_:host:port:)` for a TCP target; for a Unix socket, the cause and the socket's path.
    static func reason(_ error: any Error, target: HTTPFetch.Target) -> String {
        switch target {
        case .tcp(let host, let port): return reason(error, host: host, port: port)
        case .unix: return "\(cause(error)) (\(target))"
        }
    }

    /// Whether `error` is a connection refused at once: nobody listens on the socket (or on the
    /// port), the socket file is gone, or its mode does not let the daemon write to it.
    static func isRefused(_ error: any Error) -> Bool {
        switch error {
        case let error as IOError: return [ECONNREFUSED, ENOENT, EACCES].contains(error.errnoCode)
        case let error as NIOConnectionError: return error.connectionErrors.contains { isRefused($0.error) }
        default: return false
        }
    }

    /// The cause alone, without the address.
    private static func cause(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            return SystemError.text(error.errnoCode).lowercased()
        case ChannelError.connectTimeout(let amount):
            return "no connection within \(Double(amount.nanoseconds) / 1e9) s"
        case is NIOConnectionError:
            return "cannot connect"
        case let error as CustomStringConvertible:
            return error.description
        default:
            return "\(error)"
        }
    }
}

// MARK: Connecting

extension ClientBootstrap {
    /// Connects to `host:port`. A numeric address is used as it is: name resolution and Happy
    /// Eyeballs would add a lookup on another thread and their delays to every check.
    func connect(checking host: String, port: Int) -> EventLoopFuture<any Channel> {
        if let address = try? SocketAddress(ipAddress: host, port: port) { return connect(to: address) }
        return connect(host: host, port: port)
    }
}
