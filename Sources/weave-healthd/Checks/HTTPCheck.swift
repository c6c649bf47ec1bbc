import NIOCore
import NIOHTTP1
import NIOPosix
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
        let promise = group.next().makePromise(of: (Int, [UInt8]).self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
            .connectTimeout(.nanoseconds(timeout.totalNanoseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise))
                }
            }
            .connect(checking: url.host, port: url.port).get()
        } catch {
            promise.fail(error) // a promise must be completed, or NIO reports it leaked
            throw error
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: url.hostHeader)
        headers.add(name: "User-Agent", value: "weave-healthd/\(Defaults.version)")
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: url.path, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        return try await withTaskCancellationHandler {
            defer { channel.close(promise: nil) }
            return try await promise.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
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

/// Collects one response: status and up to 64 KiB of body.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private let promise: EventLoopPromise<(Int, [UInt8])>
    private var status = 0
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<(Int, [UInt8])>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = Int(head.status.code)
        case .body(let buffer): if body.count < 65_536 { body += buffer.readableBytesView.prefix(65_536 - body.count) }
        case .end: promise.succeed((status, body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(CheckFailure("the connection closed before a complete response"))
    }
}
