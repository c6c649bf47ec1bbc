import NIOCore
import NIOHTTP1
import NIOPosix
import WeaveSupport

/// One HTTP/1.1 GET, over TCP or a Unix socket, with `Connection: close`, a deadline for the whole
/// exchange (connect, request, response) and a cap on the body. The http check and the scrapes of
/// applications both fetch through it.
struct HTTPFetch: Sendable {
    enum Target: Sendable, Equatable, CustomStringConvertible {
        case tcp(host: String, port: Int)
        case unix(path: String)

        var description: String {
            switch self {
            case .tcp(let host, let port): return HostPort.format(host: host, port: port)
            case .unix(let path): return "unix:\(path)"
            }
        }
    }

    /// What to do with a body larger than the cap.
    enum Overflow: Sendable {
        /// Keep the first bytes, read no more (a check that looks for a word near the top).
        case truncate
        /// Fail: the response is unusable cut short (an exposition).
        case fail
    }

    struct Response: Sendable {
        let status: Int
        let body: [UInt8]
    }

    let target: Target
    let timeout: Duration
    let maxBodyBytes: Int
    let overflow: Overflow
    let group: any EventLoopGroup

    func get(_ path: String, host: String, headers extra: [(String, String)] = []) async throws -> Response {
        let loop = group.next()
        let promise = loop.makePromise(of: Response.self)
        let deadline = loop.scheduleTask(in: .nanoseconds(timeout.totalNanoseconds)) {
            promise.fail(FetchFailure("no complete response within \(timeout)"))
        }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(timeout.totalNanoseconds))
            .channelInitializer { [maxBodyBytes, overflow] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        ResponseCollector(promise: promise, maxBodyBytes: maxBodyBytes, overflow: overflow))
                }
            }
        let channel: any Channel
        do {
            switch target {
            case .tcp(let host, let port): channel = try await bootstrap.connect(checking: host, port: port).get()
            case .unix(let path): channel = try await bootstrap.connect(unixDomainSocketPath: path).get()
            }
        } catch {
            promise.fail(error) // a promise must be completed, or NIO reports it leaked
            throw error
        }
        promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: host)
        fields.add(name: "User-Agent", value: "weave-healthd/\(Defaults.version)")
        fields.add(name: "Connection", value: "close")
        for (name, value) in extra { fields.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: fields)), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(CancellationError())
        }
    }
}

/// Why a fetch failed, in an operator's words.
struct FetchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects one response: its status and body, up to the cap.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private let promise: EventLoopPromise<HTTPFetch.Response>
    private let maxBodyBytes: Int
    private let overflow: HTTPFetch.Overflow
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<HTTPFetch.Response>, maxBodyBytes: Int, overflow: HTTPFetch.Overflow) {
        self.promise = promise
        self.maxBodyBytes = maxBodyBytes
        self.overflow = overflow
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > 0 {
                body.reserveCapacity(min(length, maxBodyBytes))
            }
        case .body(let buffer):
            let room = maxBodyBytes - body.count
            if buffer.readableBytes > room {
                switch overflow {
                case .truncate:
                    body += buffer.readableBytesView.prefix(room)
                    finish()
                case .fail:
                    promise.fail(FetchFailure("response larger than \(maxBodyBytes) bytes"))
                }
                context.close(promise: nil)
            } else {
                body += buffer.readableBytesView
            }
        case .end:
            finish()
        }
    }

    private func finish() {
        guard let head else { return }
        promise.succeed(HTTPFetch.Response(status: Int(head.status.code), body: body))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as NIOHTTPDecoderError where error == .unsolicitedResponse:
            promise.fail(FetchFailure("not an HTTP response (it spoke before it was asked)"))
        case let error as HTTPParserError where error == .invalidEOFState:
            promise.fail(FetchFailure("the connection closed before a complete response"))
        case is HTTPParserError, is NIOHTTPDecoderError:
            promise.fail(FetchFailure("not an HTTP response (\(error))"))
        default:
            promise.fail(error)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(FetchFailure("the connection closed before a complete response"))
    }
}
