import CTLS
import WeaveSupport

/// One `https://` GET over Debian's OpenSSL (`CTLS`), for the http check: the response, and what
/// the TLS session says (version, whether the chain verified, the earliest expiry in the chain).
/// Blocking: run it on `BlockingCalls`.
enum TLSFetch {
    /// How the server is verified.
    struct Options: Sendable, Equatable {
        /// The PEM CA certificates to verify against, as read from `ca_file` when the configuration
        /// was loaded (never per request); nil for the system's trust store.
        var caCertificates: [UInt8]?
        /// The name sent (SNI) and verified; nil for the URL's host.
        var serverName: String?
        var clientCertificate: String?
        var clientKey: String?
        /// Whether a chain that does not verify is still healthy (its expiry still counts).
        var insecureSkipVerify = false
    }

    /// What the handshake established.
    struct Session: Sendable, Equatable {
        let version: String
        /// The chain verified against the CAs and the name matched.
        let verified: Bool
        /// Why not, in OpenSSL's words ("self-signed certificate", "hostname mismatch", …).
        let verifyError: String?
        /// The earliest notAfter among the certificates the server sent, seconds since the epoch
        /// (negative before 1970).
        let earliestExpiry: Double?
    }

    struct Response: Sendable {
        let session: Session
        let status: Int
        /// The body, at most `maxBodyBytes` of it.
        let body: [UInt8]
    }

    /// OpenSSL's context for one check's options, made on its first request and kept until the
    /// check is released (a reload): the CAs are parsed once, not per request.
    final class Client: Sendable {
        let options: Options
        /// The context, or why it could not be made; nil before the first request.
        private let made = Locked<Result<Context, FetchFailure>?>(nil)

        /// Owns the C context (freed with it).
        final class Context: Sendable {
            // Set once; OpenSSL's SSL_CTX may be used by several threads at once (each makes its own SSL).
            nonisolated(unsafe) let pointer: OpaquePointer
            init(_ pointer: OpaquePointer) { self.pointer = pointer }
            deinit { weave_tls_context_free(pointer) }
        }

        init(options: Options) {
            self.options = options
        }

        /// The context, made now if it was not (blocking: on the check's thread).
        func context() throws(FetchFailure) -> Context {
            try made.withLock { made -> Result<Context, FetchFailure> in
                if let made { return made }
                var error = [CChar](repeating: 0, count: 200)
                let certificate = options.clientCertificate.flatMap { strdup($0) }, key = options.clientKey.flatMap { strdup($0) }
                defer { free(certificate); free(key) }
                let capacity = error.count
                let pointer = if let pem = options.caCertificates {
                    pem.withUnsafeBufferPointer { weave_tls_context_new($0.baseAddress, $0.count, certificate, key, &error, capacity) }
                } else {
                    weave_tls_context_new(nil, 0, certificate, key, &error, capacity)
                }
                let result: Result<Context, FetchFailure> = pointer.map { .success(Context($0)) }
                    ?? .failure(FetchFailure(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
                made = result
                return result
            }.get()
        }
    }

    static func get(_ url: HTTPURL, client: Client, timeout: Duration, maxBodyBytes: Int) throws(FetchFailure) -> Response {
        let context = try client.context()
        let request = "GET \(url.path) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUser-Agent: weave-healthd\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        var answer = [UInt8](repeating: 0, count: maxBodyBytes + 16_384)
        var result = weave_tls_result()
        // C copies for the call, freed after it (nil stays nil: the library's default).
        let serverName = client.options.serverName.flatMap { strdup($0) }
        let host = strdup(url.host), requestText = strdup(request)
        defer { for copy in [serverName, host, requestText] { free(copy) } }
        let code = answer.withUnsafeMutableBufferPointer { buffer in
            var parameters = weave_tls_request(
                host: host, port: Int32(url.port), server_name: serverName, request: requestText,
                timeout_ms: Int32(max(1, min(timeout.totalSeconds * 1_000, 3_600_000))),
                answer: buffer.baseAddress, answer_capacity: buffer.count)
            return weave_tls_get(context.pointer, &parameters, &result)
        }
        let error = text(of: &result.error)
        guard result.handshake_done != 0 else { throw FetchFailure(error) }
        let session = Session(version: text(of: &result.version), verified: result.verified != 0,
                              verifyError: result.verified != 0 ? nil : text(of: &result.verify_error),
                              earliestExpiry: result.has_expiry != 0 ? result.earliest_expiry : nil)
        guard code == 0 else { throw FetchFailure("\(error) (after a \(session.version) handshake)") }
        let (status, body) = try parse(Array(answer.prefix(result.answer_length)))
        return Response(session: session, status: status, body: Array(body.prefix(maxBodyBytes)))
    }

    /// The status and the body of a raw HTTP/1.x response (chunked bodies joined).
    static func parse(_ bytes: [UInt8]) throws(FetchFailure) -> (Int, [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.firstRange(of: separator) else { throw FetchFailure("the response has no complete header") }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let words = lines.first?.split(separator: " ") ?? []
        guard words.count >= 2, words[0].hasPrefix("HTTP/1."), let status = Int(words[1]), (100...599).contains(status) else {
            throw FetchFailure("the response does not begin with an HTTP/1.x status line")
        }
        var body = Array(bytes[end.upperBound...])
        let chunked = lines.dropFirst().contains { $0.lowercased().hasPrefix("transfer-encoding:") && $0.lowercased().contains("chunked") }
        if chunked { body = dechunk(body) }
        return (status, body)
    }

    /// A chunked body's data, as far as it goes.
    private static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while let lineEnd = bytes[index...].firstRange(of: [13, 10]) {
            let sizeText = String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingWhitespace(), radix: 16), size > 0 else { break }
            let start = lineEnd.upperBound
            let stop = min(bytes.count, start + size)
            out += bytes[start..<stop]
            index = min(bytes.count, stop + 2)
        }
        return out
    }

    private static func text<T>(of field: inout T) -> String {
        withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
