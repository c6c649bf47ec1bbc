import NIOCore
import WeaveDI
import WeaveHealth

/// GETs a URL: healthy when the status is in the expected range and the body (first 64 KiB)
/// contains the expected text, if any.
struct HTTPCheck: HealthCheckable {
    let name: String
    let url: HTTPURL
    let expectedStatus: ClosedRange<Int>
    let bodyContains: String?
    let timeout: Duration
    let group: any EventLoopGroup
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        do {
            let (status, body) = try await fetch()
            observations.record(name, value: Double(status), unit: "status")
            guard expectedStatus.contains(status) else {
                return .unhealthy(error: CheckFailure("GET \(url.path) answered \(status), expected \(expectedStatus.lowerBound)-\(expectedStatus.upperBound)"))
            }
            if let bodyContains, !String(decoding: body, as: UTF8.self).contains(bodyContains) {
                return .unhealthy(error: CheckFailure("GET \(url.path) answered \(status) without '\(bodyContains)'"))
            }
            return .healthy
        } catch {
            let reason = error is CheckFailure ? "\(error)" : NetworkFailure.reason(error, host: url.host, port: url.port)
            return .unhealthy(error: CheckFailure("GET http://\(url.hostHeader)\(url.path) failed: \(reason)"))
        }
    }

    private func fetch() async throws -> (Int, [UInt8]) {
        let fetch = HTTPFetch(target: .tcp(host: url.host, port: url.port), timeout: timeout, maxBodyBytes: 65_536,
                              overflow: .truncate, group: group)
        let response = try await fetch.get(url.path, host: url.hostHeader)
        return (response.status, response.body)
    }
}

extension HTTPCheck {
    /// `type: http`: `url` (http only), `expect_status` (200-399), `body_contains`.
    struct Options: CheckOptions {
        static let typeName = "http"
        static let keys: Set<String> = ["url", "expect_status", "body_contains"]
        let url: HTTPURL
        let expectedStatus: ClosedRange<Int>
        let bodyContains: String?

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            let urlNode = try fields.required("url")
            let text = try fields.loader.string(urlNode)
            if text.hasPrefix("https://") {
                throw fields.loader.error(urlNode, "https is not supported by the built-in http check; use an exec check with check_http --ssl")
            }
            guard let url = HTTPURL(text) else { throw fields.loader.error(urlNode, "url must be http://host[:port]/path, not '\(text)'") }
            self.url = url
            expectedStatus = try fields["expect_status"].map { node throws(ConfigurationError) in try fields.loader.statusRange(node) } ?? 200...399
            bodyContains = try fields.string("body_contains")
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            HTTPCheck(name: context.name, url: url, expectedStatus: expectedStatus, bodyContains: bodyContains, timeout: context.timeout,
                      group: context.group, observations: context.observations)
        }
    }
}
