import WeaveReaders
import WeaveSupport

/// Why a probe got no usable answer.
enum ProbeError: Error, CustomStringConvertible {
    case unreachable(String)
    case timedOut(String)
    case badResponse(String)
    /// `--check` named a check the daemon does not have: a mistake in the command (a typo in an
    /// `ExecCondition=`), not an outage.
    case unknownChecks([String], known: [String])

    var description: String {
        switch self {
        case .unreachable(let text): "unreachable: \(text)"
        case .timedOut(let text): "timed out: \(text)"
        case .badResponse(let text): "bad response: \(text)"
        case .unknownChecks(let names, let known):
            "no check named \(names.joined(separator: ", ")) (known: \(known.isEmpty ? "none" : known.joined(separator: ", ")))"
        }
    }
}

/// One HTTP/1.1 GET over a plain socket (no event loop to start), bounded by a connect deadline
/// and an overall deadline: a listener that accepts and never answers costs at most the deadline.
struct HTTPProbe {
    let target: ProbeTarget
    let connectTimeout: Duration
    let deadline: ContinuousClock.Instant
    static let maxResponseBytes = 4 << 20

    /// Connects, then closes: only that the endpoint accepts connections.
    func connectOnly() throws(ProbeError) {
        close(try connect())
    }

    func get(_ path: String, accept: String) throws(ProbeError) -> HTTPReply {
        let socket = try connect()
        defer { close(socket) }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(target.hostHeader)\r\nUser-Agent: weave-health/\(WeaveVersion.text)\r\n"
            + "Accept: \(accept)\r\nConnection: close\r\n\r\n"
        var bytes = Array(request.utf8)[...]
        while !bytes.isEmpty {
            try wait(socket, for: Int16(POLLOUT), until: deadline, "sending the request")
            let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw .unreachable("send: \(SystemError.text(errno))")
            }
            bytes = bytes.dropFirst(sent)
        }
        var response = HTTPReplyReader(maxBytes: Self.maxResponseBytes)
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let reply = try response.probeReply(.open) { return reply }
            try wait(socket, for: Int16(POLLIN), until: deadline, "waiting for the response")
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw .unreachable("recv: \(SystemError.text(errno))")
            }
            if count == 0 {
                guard let reply = try response.probeReply(.closed) else {
                    throw .badResponse(response.bytes.isEmpty ? "the connection closed without an answer" : "truncated HTTP response")
                }
                return reply
            }
            response.append(buffer[..<count])
            guard response.bytes.count <= Self.maxResponseBytes else { throw .badResponse("more than 4 MiB") }
        }
    }

    private func connect() throws(ProbeError) -> Int32 {
        let connectDeadline = min(deadline, ContinuousClock.now + connectTimeout)
        switch target {
        case .unix(let path):
            guard var address = sockaddr_un(path: path) else { throw .unreachable("socket path too long: \(path)") }
            return try withUnsafeBytes(of: &address) { raw throws(ProbeError) in
                try connect(family: AF_UNIX, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self),
                            socklen_t(MemoryLayout<sockaddr_un>.size), until: connectDeadline)
            }
        case .tcp(let host, let port):
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = AI_NUMERICSERV
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, String(port), &hints, &list)
            guard status == 0, let first = list else {
                throw .unreachable("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
            }
            defer { freeaddrinfo(list) }
            var lastError = ProbeError.unreachable("no address for \(host)")
            var entry: UnsafeMutablePointer<addrinfo>? = first
            while let current = entry {
                do {
                    return try connect(family: current.pointee.ai_family, current.pointee.ai_addr, current.pointee.ai_addrlen,
                                       until: connectDeadline)
                } catch {
                    lastError = error
                }
                entry = current.pointee.ai_next
            }
            throw lastError
        }
    }

    private func connect(family: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t,
                         until connectDeadline: ContinuousClock.Instant) throws(ProbeError) -> Int32 {
        let socket = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw .unreachable("socket: \(SystemError.text(errno))") }
        if Glibc.connect(socket, address, length) != 0 && errno != EINPROGRESS {
            let message = SystemError.text(errno)
            close(socket)
            throw .unreachable(message)
        }
        do {
            try wait(socket, for: Int16(POLLOUT), until: connectDeadline, "connecting")
        } catch {
            close(socket)
            throw error
        }
        var failure: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &size)
        guard failure == 0 else {
            close(socket)
            throw .unreachable(SystemError.text(failure))
        }
        return socket
    }

    private func wait(_ socket: Int32, for events: Int16, until limit: ContinuousClock.Instant, _ what: String) throws(ProbeError) {
        while true {
            let remaining = limit - ContinuousClock.now
            guard remaining > .zero else { throw .timedOut(what) }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let milliseconds = Int32(min(remaining.totalNanoseconds / 1_000_000 + 1, 60_000))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .unreachable("poll: \(SystemError.text(errno))") }
        }
    }
}

extension HTTPReply {
    /// Parses a whole response (by Content-Length or chunked encoding, or up to the end of the
    /// connection when `complete`); nil while more is needed.
    static func parse(_ bytes: [UInt8], complete: Bool) throws(ProbeError) -> HTTPReply? {
        var reader = HTTPReplyReader(maxBytes: HTTPProbe.maxResponseBytes)
        reader.append(bytes[...])
        return try reader.probeReply(complete ? .closed : .open)
    }
}

extension HTTPReplyReader {
    /// `reply(_:)`, its refusal a bad response.
    mutating func probeReply(_ end: End) throws(ProbeError) -> HTTPReply? {
        do { return try reply(end) } catch { throw .badResponse(error.reason.printable) }
    }
}
