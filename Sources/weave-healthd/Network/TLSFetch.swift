import CTLS
import WeaveSupport

/// One `https://` GET over Debian's OpenSSL (`CTLS`), for the http check: the response, and what
/// the TLS session says (version, whether the chain verified, the earliest expiry in the chain).
/// Blocking: run it off Swift's pool (`offThePool`).
enum TLSFetch {
    /// How the server is verified.
    struct Options: Sendable, Equatable {
        /// PEM CA certificates to verify against; nil for the system's trust store.
        var caFile: String?
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
        /// The earliest notAfter among the certificates the server sent, seconds since the epoch.
        let earliestExpiry: Double?
    }

    struct Response: Sendable {
        let session: Session
        let status: Int
        /// The body, at most `maxBodyBytes` of it.
        let body: [UInt8]
    }

    static func get(_ url: HTTPURL, options: Options, timeout: Duration, maxBodyBytes: Int) throws(FetchFailure) -> Response {
        let request = "GET \(url.path) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUser-Agent: weave-healthd\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        var answer = [UInt8](repeating: 0, count: maxBodyBytes + 16_384)
        var result = weave_tls_result()
        // C copies for the call, freed after it (nil stays nil: the library's default).
        let ca = options.caFile.flatMap { strdup($0) }, serverName = options.serverName.flatMap { strdup($0) }
        let certificate = options.clientCertificate.flatMap { strdup($0) }, key = options.clientKey.flatMap { strdup($0) }
        let host = strdup(url.host), requestText = strdup(request)
        defer { for copy in [ca, serverName, certificate, key, host, requestText] { free(copy) } }
        let code = answer.withUnsafeMutableBufferPointer { buffer in
            var parameters = weave_tls_request(
                host: host, port: Int32(url.port), server_name: serverName, request: requestText, ca_file: ca, client_cert: certificate,
                client_key: key, timeout_ms: Int32(max(1, min(timeout.totalSeconds * 1_000, 3_600_000))),
                answer: buffer.baseAddress, answer_capacity: buffer.count)
            return weave_tls_get(&parameters, &result)
        }
        let error = text(of: &result.error)
        guard result.handshake_done != 0 else { throw FetchFailure(error) }
        let session = Session(version: text(of: &result.version), verified: result.verified != 0,
                              verifyError: result.verified != 0 ? nil : text(of: &result.verify_error),
                              earliestExpiry: result.earliest_expiry > 0 ? result.earliest_expiry : nil)
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
