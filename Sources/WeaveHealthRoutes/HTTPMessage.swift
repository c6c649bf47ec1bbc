public import NIOCore
/// A request as the router sees it: plain values, so the router is testable without sockets.
public struct HealthRequest: Sendable {
    public var method: String
    /// The path without the query, percent-decoded.
    public var path: String
    /// Query parameters; a bare `?verbose` has the value "".
    public var query: [(String, String)]
    public var headers: [(String, String)]
    /// Whether it came to one of the server's Unix socket listeners (which
    /// `HealthPolicy.unixSocketDetailsPolicy` governs); routes mounted in an
    /// application's own router leave it false.
    public var viaUnixSocket = false

    public init(method: String, uri: String, headers: [(String, String)] = []) {
        self.method = method
        self.headers = headers
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = HealthRequest.percentDecode(String(parts.first ?? "/"))
        query = parts.count > 1 ? parts[1].split(separator: "&").map { item in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (HealthRequest.percentDecode(String(pair[0])), pair.count > 1 ? HealthRequest.percentDecode(String(pair[1])) : "")
        } : []
    }

    /// The first header named `name`, case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// Whether the query has `name`, with or without a value.
    public func has(_ name: String) -> Bool { query.contains { $0.0 == name } }

    /// Every value of `name` (`?exclude=a&exclude=b`, or `?exclude=a,b`).
    public func values(_ name: String) -> [String] {
        query.filter { $0.0 == name }.flatMap { $0.1.split(separator: ",").map(String.init) }
    }

    static func percentDecode(_ text: String) -> String {
        guard text.contains("%") || text.contains("+") else { return text }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A response from the router. The body is a `ByteBuffer`, as servers built on SwiftNIO
/// (Hummingbird, Vapor, ours) write it: a megabytes-large `/metrics` is not copied on its way out.
public struct HealthResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: ByteBuffer

    public init(status: Int, headers: [(String, String)] = [], body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int, contentType: String, text: String) {
        self.init(status: status, headers: [("Content-Type", contentType)], body: ByteBuffer(string: text))
    }
}
