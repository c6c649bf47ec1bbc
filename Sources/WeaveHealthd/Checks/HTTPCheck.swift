import NIOCore
import WeaveHealth
import WeavePrometheus
import WeaveSupport

/// GETs a URL: healthy when the status is in the expected range and the body (first 64 KiB)
/// contains the expected text, if any. Over `https://`, also when the certificate chain verifies
/// (unless `insecure_skip_verify`) and its earliest expiry is more than `warn_days` away (degraded
/// within it, unhealthy within `fail_days`), with the date in the reason.
struct HTTPCheck: HealthCheckable {
    let name: String
    let url: HTTPURL
    let expectedStatus: ClosedRange<Int>
    let bodyContains: String?
    let tls: TLSSettings
    let timeout: Duration
    let group: any EventLoopGroup
    /// OpenSSL's context for an https URL, made once for this check (its CAs parsed once).
    let client: TLSFetch.Client
    let blocking: BlockingCalls
    let observations: Observations

    /// An https check's verification and expiry thresholds.
    struct TLSSettings: Sendable, Equatable {
        var options = TLSFetch.Options()
        var warnDays = 14.0
        var failDays = 3.0
    }

    static let maxBodyBytes = 65_536

    func healthCheck() async -> HealthStatus {
        if url.secure { return await secureCheck() }
        do {
            let (status, body) = try await fetch()
            observations.record(name, value: Double(status), unit: "status")
            return answerFailure(status: status, body: body) ?? .healthy
        } catch {
            let reason = error is CheckFailure ? "\(error)" : NetworkFailure.reason(error, host: url.host, port: url.port)
            return .unhealthy(error: CheckFailure("GET http://\(url.hostHeader)\(url.path) failed: \(reason)"))
        }
    }

    /// The https exchange: the session's verdicts, then the answer's, the worst of them.
    private func secureCheck() async -> HealthStatus {
        let (url, client, timeout) = (self.url, self.client, self.timeout)
        let outcome: Result<TLSFetch.Response, FetchFailure>
        do {
            outcome = try await blocking.run("check \(name)", lane: .tls, deadline: timeout) { () -> Result<TLSFetch.Response, FetchFailure> in
                do throws(FetchFailure) {
                    return .success(try TLSFetch.get(url, client: client, timeout: timeout, maxBodyBytes: Self.maxBodyBytes))
                } catch {
                    return .failure(error)
                }
            }
        } catch {
            outcome = .failure(FetchFailure("\(error)"))
        }
        let response: TLSFetch.Response
        switch outcome {
        case .failure(let failure):
            observations.record(name, of: Options.self, nil as TLSFetch.Session?)
            return .unhealthy(error: CheckFailure("GET \(url.description) failed: \(failure)"))
        case .success(let answer):
            response = answer
        }
        observations.record(name, of: Options.self, response.session)
        observations.record(name, value: Double(response.status), unit: "status")
        let session = response.session
        let expiry = session.earliestExpiry.map { Self.expiry($0) } ?? "has no expiry date"
        if !session.verified, !tls.options.insecureSkipVerify {
            return .unhealthy(error: CheckFailure(
                "\(url.description): the certificate does not verify: \(session.verifyError ?? "unknown") (the earliest in the chain \(expiry))"))
        }
        if let failure = answerFailure(status: response.status, body: response.body) { return failure }
        if let earliest = session.earliestExpiry {
            let days = (earliest - WallClock.now()) / 86_400
            if days < tls.failDays { return .unhealthy(error: CheckFailure("\(url.description): a certificate \(expiry), within fail_days (\(Self.days(tls.failDays)))")) }
            if days < tls.warnDays { return .degraded(reason: "\(url.description): a certificate \(expiry), within warn_days (\(Self.days(tls.warnDays)))") }
        }
        return .healthy
    }

    /// Unhealthy when the answer is not the expected one (its status, or the text its body must
    /// contain), over http and https alike; nil when it is.
    private func answerFailure(status: Int, body: [UInt8]) -> HealthStatus? {
        guard expectedStatus.contains(status) else {
            return .unhealthy(error: CheckFailure("GET \(url.path) answered \(status), expected \(expectedStatus.lowerBound)-\(expectedStatus.upperBound)"))
        }
        if let bodyContains, !String(decoding: body, as: UTF8.self).contains(bodyContains) {
            return .unhealthy(error: CheckFailure("GET \(url.path) answered \(status) without '\(bodyContains)'"))
        }
        return nil
    }

    /// "expires 2026-12-06 (in 10 days)" or "expired 2026-11-20 (6 days ago)".
    static func expiry(_ time: Double) -> String {
        let days = (time - WallClock.now()) / 86_400
        let date = Timestamp.date(time)
        return days >= 0 ? "expires \(date) (in \(Self.days(days)))" : "expired \(date) (\(Self.days(-days)) ago)"
    }

    private static func days(_ value: Double) -> String {
        let whole = Int(value.rounded(.down))
        return whole == 1 ? "1 day" : "\(whole) days"
    }

    private func fetch() async throws -> (Int, [UInt8]) {
        let fetch = HTTPFetch(target: .tcp(host: url.host, port: url.port), timeout: timeout, maxBodyBytes: Self.maxBodyBytes,
                              overflow: .truncate, group: group)
        let response = try await fetch.get(url.path, host: url.hostHeader)
        return (response.status, response.body)
    }
}

extension HTTPCheck {
    /// `type: http`: `url` (http or https), `expect_status` (200-399), `body_contains`; for https,
    /// `ca_file`, `server_name`, `client_cert` and `client_key`, `insecure_skip_verify`, `warn_days` (14)
    /// and `fail_days` (3).
    struct Options: CheckOptions {
        static let typeName = "http"
        static let tlsKeys: Set<String> = ["ca_file", "server_name", "client_cert", "client_key", "insecure_skip_verify", "warn_days", "fail_days"]
        static let keys: Set<String> = Set(["url", "expect_status", "body_contains"]).union(tlsKeys)
        let url: HTTPURL
        let expectedStatus: ClosedRange<Int>
        let bodyContains: String?
        let tls: TLSSettings

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            let urlNode = try fields.required("url")
            let text = try fields.loader.string(urlNode)
            guard let url = HTTPURL(text) else { throw fields.loader.error(urlNode, "url must be http(s)://host[:port]/path, not '\(text)'") }
            self.url = url
            expectedStatus = try fields["expect_status"].map { node throws(ConfigurationError) in try fields.loader.statusRange(node) } ?? 200...399
            bodyContains = try fields.string("body_contains")
            var tls = TLSSettings()
            if !url.secure, let key = Self.tlsKeys.sorted().first(where: { fields[$0] != nil }) {
                throw fields.error(key, "\(key) applies to https:// URLs only")
            }
            if let path = try fields.string("ca_file") {
                tls.options.caCertificates = try Self.caCertificates(path, fields)
            }
            tls.options.serverName = try fields.string("server_name")
            tls.options.clientCertificate = try fields.string("client_cert")
            tls.options.clientKey = try fields.string("client_key")
            if (tls.options.clientCertificate == nil) != (tls.options.clientKey == nil) {
                throw fields.error(tls.options.clientCertificate == nil ? "client_key" : "client_cert", "client_cert and client_key go together")
            }
            for key in ["client_cert", "client_key"] {
                if let path = try fields.string(key), case .failure(let failure) = readRegularFile(path, limit: Self.maxCAFileBytes) {
                    throw fields.error(key, "\(key) \(path) cannot be used: \(failure)")
                }
            }
            tls.options.insecureSkipVerify = try fields.boolean("insecure_skip_verify") ?? false
            tls.warnDays = Double(try fields.integer("warn_days", in: 0...3_650) ?? 14)
            tls.failDays = Double(try fields.integer("fail_days", in: 0...3_650) ?? 3)
            if tls.failDays > tls.warnDays { throw fields.error("fail_days", "fail_days (\(Int(tls.failDays))) must not exceed warn_days (\(Int(tls.warnDays)))") }
            self.tls = tls
        }

        /// The largest `ca_file` read (Debian's whole bundle is about 220 KB).
        static let maxCAFileBytes = 4 << 20

        /// `ca_file`'s certificates, read now, once per configuration: a regular file of at most
        /// `maxCAFileBytes` with at least one PEM certificate, or a positioned error.
        static func caCertificates(_ path: String, _ fields: ConfigurationFields) throws(ConfigurationError) -> [UInt8] {
            switch readRegularFile(path, limit: maxCAFileBytes) {
            case .failure(let failure):
                throw fields.error("ca_file", "ca_file \(path) cannot be used: \(failure)")
            case .success(let bytes):
                guard bytes.firstRange(of: Array("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
                    throw fields.error("ca_file", "ca_file \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
                }
                return bytes
            }
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            HTTPCheck(name: context.name, url: url, expectedStatus: expectedStatus, bodyContains: bodyContains, tls: tls,
                      timeout: context.timeout, group: context.group, client: TLSFetch.Client(options: tls.options),
                      blocking: context.blocking, observations: context.observations)
        }
    }
}

extension HTTPCheck.Options: CheckMetrics {
    static let familyPrefix = "weave_check_tls_"

    /// The TLS sessions of the https checks, `{check}`: the earliest certificate expiry of the chain
    /// the server sent (blackbox_exporter's `probe_ssl_earliest_cert_expiry`), the TLS version, and
    /// whether the chain verified.
    static func families(_ observations: Observations) -> [MetricFamily] {
        var expiry: [([(String, String)], Double)] = []
        var version: [([(String, String)], Double)] = []
        var verified: [([(String, String)], Double)] = []
        for (check, session) in observations.all(of: Self.self, as: TLSFetch.Session.self).sorted(by: { $0.key < $1.key }) {
            if let earliest = session.earliestExpiry { expiry.append(([("check", check)], earliest)) }
            version.append(([("check", check), ("version", session.version)], 1))
            verified.append(([("check", check)], session.verified ? 1 : 0))
        }
        return [
            .gauge("weave_check_tls_cert_expiry_timestamp_seconds",
                   "The earliest expiry among the certificates an https check's server sent, in seconds since the Unix epoch.",
                   unit: "seconds", expiry),
            .gauge("weave_check_tls_version_info", "The TLS version an https check's session used; the value is always 1.", version),
            .gauge("weave_check_tls_verified", "Whether an https check's certificate chain verified against its CAs and name (1) or not (0).",
                   verified),
        ]
    }
}
