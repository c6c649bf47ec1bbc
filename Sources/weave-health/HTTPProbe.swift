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

/// An HTTP answer.
struct HTTPReply {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
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
        var response = ReplyReader()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let reply = try response.reply(complete: false) { return reply }
            try wait(socket, for: Int16(POLLIN), until: deadline, "waiting for the response")
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw .unreachable("recv: \(SystemError.text(errno))")
            }
            if count == 0 {
                guard let reply = try response.reply(complete: true) else {
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
        var reader = ReplyReader()
        reader.append(bytes[...])
        return try reader.reply(complete: complete)
    }
}

/// A response read as it arrives, in time linear in its size however it is cut into reads: the
/// head is looked for only in the bytes that arrived since the last look, and a chunked body is
/// walked once, chunk by chunk.
struct ReplyReader {
    private(set) var bytes: [UInt8] = []
    /// How far the head's end was looked for.
    private var searched = 0
    /// The status and headers, once the head is complete, and where the body begins.
    private var head: (reply: HTTPReply, bodyStart: Int, length: Int?, chunked: Bool)?
    /// Chunked: where the next chunk's size line begins, and the chunks decoded so far.
    private var nextChunk = 0
    private var decoded: [UInt8] = []
    private var lastChunkSeen = false

    mutating func append(_ new: ArraySlice<UInt8>) { bytes += new }

    /// The response once it is all there (or up to the end of the connection when `complete`);
    /// nil while more is needed.
    mutating func reply(complete: Bool) throws(ProbeError) -> HTTPReply? {
        if head == nil { try readHead() }
        guard let head else {
            if complete && !bytes.isEmpty { throw .badResponse("truncated HTTP response") }
            return nil
        }
        var reply = head.reply
        if head.chunked {
            try walkChunks()
            guard lastChunkSeen else {
                if complete { throw .badResponse("truncated chunked body") }
                return nil
            }
            reply.body = decoded
        } else if let length = head.length {
            guard bytes.count - head.bodyStart >= length else {
                if complete { throw .badResponse("body shorter than its Content-Length") }
                return nil
            }
            reply.body = Array(bytes[head.bodyStart..<head.bodyStart + length])
        } else {
            guard complete else { return nil }
            reply.body = Array(bytes[head.bodyStart...])
        }
        return reply
    }

    private mutating func readHead() throws(ProbeError) {
        guard let headEnd = bytes[max(0, searched - 3)...].firstRange(of: [13, 10, 13, 10]) else {
            searched = bytes.count
            if bytes.count >= 5, !bytes.starts(with: Array("HTTP/".utf8)) { throw .badResponse("not HTTP: \(Self.printable(bytes))") }
            if bytes.count > 65_536 { throw .badResponse("headers larger than 64 KiB") }
            return
        }
        let lines = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]), (100...599).contains(status)
        else { throw .badResponse("not HTTP: \(Self.printable(bytes))") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw .badResponse("malformed header line") }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingWhitespace()))
        }
        let reply = HTTPReply(status: status, headers: headers, body: [])
        var length: Int?
        let chunked = reply.header("Transfer-Encoding")?.lowercased() == "chunked"
        if !chunked, let text = reply.header("Content-Length") {
            // Digits only: no sign, and no length beyond what the probe reads at all.
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Int(text),
                  value <= HTTPProbe.maxResponseBytes else { throw .badResponse("bad Content-Length: \(text.printable)") }
            length = value
        }
        head = (reply, headEnd.upperBound, length, chunked)
        nextChunk = headEnd.upperBound
    }

    /// Decodes the chunks that have arrived whole since the last call.
    private mutating func walkChunks() throws(ProbeError) {
        while !lastChunkSeen {
            // A size line is short; one that goes on is refused rather than looked through again at every read.
            let window = bytes[nextChunk..<min(bytes.count, nextChunk + 1_024)]
            guard let lineEnd = window.firstRange(of: [13, 10]) else {
                if window.count == 1_024 { throw .badResponse("bad chunk size") }
                return
            }
            let sizeText = String(String(decoding: bytes[nextChunk..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? "")
                .trimmingWhitespace()
            // Hex digits only (no sign), and no chunk larger than the whole response may be.
            guard !sizeText.isEmpty, sizeText.count <= 8, sizeText.allSatisfy(\.isHexDigit), let size = Int(sizeText, radix: 16),
                  size <= HTTPProbe.maxResponseBytes else { throw .badResponse("bad chunk size") }
            if size == 0 {
                lastChunkSeen = true
                return
            }
            guard bytes.count >= lineEnd.upperBound + size + 2 else { return }
            decoded += bytes[lineEnd.upperBound..<lineEnd.upperBound + size]
            nextChunk = lineEnd.upperBound + size + 2
        }
    }

    private static func printable(_ bytes: [UInt8]) -> String {
        "\"" + String(decoding: bytes.prefix(40), as: UTF8.self).printable + "\""
    }
}
