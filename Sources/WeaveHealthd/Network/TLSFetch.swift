import CTLS
import WeaveReaders
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
        // The answer ends where the server closed, or where the buffer filled: then the body is what came of it.
        var reader = HTTPReplyReader(maxBytes: .max)
        reader.append(answer[..<result.answer_length])
        let reply: HTTPReply?
        do {
            reply = try reader.reply(result.truncated != 0 ? .cut : .closed)
        } catch {
            throw FetchFailure("\(error.reason) (after a \(session.version) handshake)")
        }
        guard let reply else { throw FetchFailure("the connection closed without an answer (after a \(session.version) handshake)") }
        return Response(session: session, status: reply.status, body: Array(reply.body.prefix(maxBodyBytes)))
    }

    private static func text<T>(of field: inout T) -> String {
        withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
