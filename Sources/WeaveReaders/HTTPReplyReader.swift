import WeaveSupport

/// An HTTP/1.x answer: its status, its headers in order, and its body (chunks joined).
package struct HTTPReply: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first header named `name`, case-insensitively.
    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// Why a response was refused.
package struct HTTPReplyError: Error, CustomStringConvertible {
    package let reason: String
    init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}

/// An HTTP/1.x response read as it arrives, in time linear in its size however it is cut into
/// reads: the head is looked for only in the bytes that arrived since the last look, and a chunked
/// body is walked once, chunk by chunk. Strict: a status line that is not HTTP/1.x, a malformed
/// header, a Content-Length or chunk size that is not digits or above `maxBytes` are refused. The
/// probe reads its answers with it, and the daemon its https checks' answers.
package struct HTTPReplyReader {
    /// How the bytes so far end.
    package enum End {
        /// More may come: nil until the response is whole.
        case open
        /// The peer closed the connection: a response cut short is refused.
        case closed
        /// The reader stopped reading (its buffer was full): the body is what arrived of it.
        case cut
    }

    /// The largest Content-Length or chunk the response may declare.
    package let maxBytes: Int
    package private(set) var bytes: [UInt8] = []
    /// How far the head's end was looked for.
    private var searched = 0
    /// The status and headers, once the head is complete, and where the body begins.
    private var head: (reply: HTTPReply, bodyStart: Int, length: Int?, chunked: Bool)?
    /// Chunked: where the next chunk's size line begins, and the chunks decoded so far.
    private var nextChunk = 0
    private var decoded: [UInt8] = []
    private var lastChunkSeen = false

    package init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    package mutating func append(_ new: ArraySlice<UInt8>) { bytes += new }

    /// The response once it is all there, or as `end` says; nil while more is needed.
    package mutating func reply(_ end: End) throws(HTTPReplyError) -> HTTPReply? {
        if head == nil { try readHead() }
        guard let head else {
            if end != .open && !bytes.isEmpty { throw HTTPReplyError("truncated HTTP response") }
            return nil
        }
        var reply = head.reply
        if head.chunked {
            try walkChunks()
            guard lastChunkSeen || end == .cut else {
                if end == .closed { throw HTTPReplyError("truncated chunked body") }
                return nil
            }
            reply.body = decoded
        } else if let length = head.length {
            guard bytes.count - head.bodyStart >= length || end == .cut else {
                if end == .closed { throw HTTPReplyError("body shorter than its Content-Length") }
                return nil
            }
            reply.body = Array(bytes[head.bodyStart..<min(bytes.count, head.bodyStart + length)])
        } else {
            guard end != .open else { return nil }
            reply.body = Array(bytes[head.bodyStart...])
        }
        return reply
    }

    private mutating func readHead() throws(HTTPReplyError) {
        guard let headEnd = bytes[max(0, searched - 3)...].firstRange(of: [13, 10, 13, 10]) else {
            searched = bytes.count
            if bytes.count >= 5, !bytes.starts(with: Array("HTTP/".utf8)) { throw HTTPReplyError("not HTTP: \(Self.printable(bytes))") }
            if bytes.count > 65_536 { throw HTTPReplyError("headers larger than 64 KiB") }
            return
        }
        let lines = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]), (100...599).contains(status)
        else { throw HTTPReplyError("not HTTP: \(Self.printable(bytes))") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw HTTPReplyError("malformed header line") }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingWhitespace()))
        }
        let reply = HTTPReply(status: status, headers: headers, body: [])
        var length: Int?
        let chunked = reply.header("Transfer-Encoding")?.lowercased() == "chunked"
        if !chunked, let text = reply.header("Content-Length") {
            // Digits only: no sign, and no length beyond `maxBytes`.
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Int(text),
                  value <= maxBytes else { throw HTTPReplyError("bad Content-Length: \(text.logSafe)") }
            length = value
        }
        head = (reply, headEnd.upperBound, length, chunked)
        nextChunk = headEnd.upperBound
    }

    /// Decodes the chunks that have arrived whole since the last call.
    private mutating func walkChunks() throws(HTTPReplyError) {
        while !lastChunkSeen {
            // A size line is short; one that goes on is refused rather than looked through again at every read.
            let window = bytes[nextChunk..<min(bytes.count, nextChunk + 1_024)]
            guard let lineEnd = window.firstRange(of: [13, 10]) else {
                if window.count == 1_024 { throw HTTPReplyError("bad chunk size") }
                return
            }
            let sizeText = String(String(decoding: bytes[nextChunk..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? "")
                .trimmingWhitespace()
            // Hex digits only (no sign), and no chunk larger than `maxBytes`.
            guard !sizeText.isEmpty, sizeText.count <= 8, sizeText.allSatisfy(\.isHexDigit), let size = Int(sizeText, radix: 16),
                  size <= maxBytes else { throw HTTPReplyError("bad chunk size") }
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
        "\"" + String(decoding: bytes.prefix(40), as: UTF8.self).logSafe + "\""
    }
}
