import WeaveSupport

/// The file of a Unix socket a server listens on. A file at the path is taken over only when no
/// process accepts connections on it any more (a crashed process's leftover), and the file is
/// removed at the end only while it is still the socket this process bound: a second instance
/// under the same name neither hides the first nor, when it stops, deletes the first's socket.
/// (NIO's own bind removes whatever socket file is at the path, at bind and again at close.)
struct UnixSocketFile: Sendable, Equatable {
    let path: String
    let device: UInt64
    let inode: UInt64

    /// A new socket bound at `path` with permissions `mode`, not yet listening: its descriptor, for
    /// the server to listen on, and its file. A socket file nobody listens on is replaced.
    static func bound(at path: String, mode: UInt32) throws -> (descriptor: Int32, file: UnixSocketFile) {
        guard var address = sockaddr_un(path: path) else { throw UnixSocketError("the socket path is too long: \(path)") }
        if current(at: path) != nil {
            guard !someoneListens(&address) else { throw UnixSocketError("another process listens on \(path)") }
            unlink(path)
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw UnixSocketError("cannot make a socket for \(path): \(SystemError.text(errno))") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let reason = SystemError.text(errno)
            close(descriptor)
            throw UnixSocketError("cannot bind \(path): \(reason)")
        }
        // Before it listens, so no client connects under the default permissions.
        guard chmod(path, mode_t(mode)) == 0, let file = current(at: path) else {
            let reason = SystemError.text(errno)
            close(descriptor)
            unlink(path)
            throw UnixSocketError("cannot set the permissions of \(path): \(reason)")
        }
        return (descriptor, file)
    }

    /// The socket file now at `path`, or nil when there is none.
    static func current(at path: String) -> UnixSocketFile? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return UnixSocketFile(path: path, device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Whether a process accepts connections on the socket at `address`: a connection succeeds, or
    /// its backlog is full.
    private static func someoneListens(_ address: inout sockaddr_un) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0 || errno == EAGAIN
    }

    /// Removes the file, if it is still this socket.
    func remove() {
        if Self.current(at: path) == self { unlink(path) }
    }
}

/// A Unix socket listener that could not be set up, in an operator's words.
public struct UnixSocketError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
