import CSystemd
import WeaveSupport

/// A listening socket passed by the service manager (`$LISTEN_FDS`, `$LISTEN_PID`, `$LISTEN_FDNAMES`).
public struct ActivatedSocket: Sendable, Equatable {
    /// The address family of an activated socket, read with `getsockname`.
    public enum Address: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
        /// A descriptor that is not a listening TCP or Unix stream socket.
        case unsupported
    }

    public let descriptor: Int32
    /// `FileDescriptorName=` of the socket unit (the unit's name when not set).
    public let name: String
    public let address: Address
}

/// Socket activation through `sd_listen_fds_with_names`.
public enum SocketActivation {
    /// The sockets passed to this process, or an empty list when none were. The environment
    /// variables are unset, so that child processes do not see them.
    public static func sockets() -> [ActivatedSocket] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count > 0 else { return [] }
        defer {
            if let names {
                for index in 0..<Int(count) { free(names[index]) }
                free(names)
            }
        }
        return (0..<count).map { index in
            let descriptor = SD_LISTEN_FDS_START + index
            let name = names?[Int(index)].map { String(cString: $0) } ?? "unknown"
            return ActivatedSocket(descriptor: descriptor, name: name, address: address(of: descriptor))
        }
    }

    static func address(of descriptor: Int32) -> ActivatedSocket.Address {
        guard sd_is_socket(descriptor, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0 else { return .unsupported }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard status == 0 else { return .unsupported }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin_addr
                    return .tcp(host: text(AF_INET, &address, Int(INET_ADDRSTRLEN)), port: Int(UInt16(bigEndian: pointer.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin6_addr
                    return .tcp(host: text(AF_INET6, &address, Int(INET6_ADDRSTRLEN)), port: Int(UInt16(bigEndian: pointer.pointee.sin6_port)))
                }
            }
        case AF_UNIX:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { pointer in
                    var path = pointer.pointee.sun_path
                    return .unix(path: withUnsafeBytes(of: &path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
                }
            }
        default:
            return .unsupported
        }
    }

    private static func text(_ family: Int32, _ address: UnsafeRawPointer, _ size: Int) -> String {
        var buffer = [CChar](repeating: 0, count: size)
        guard inet_ntop(family, address, &buffer, socklen_t(size)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
