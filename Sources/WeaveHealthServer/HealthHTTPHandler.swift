import NIOCore
import NIOHTTP1
import WeaveDI

/// One connection's HTTP/1.1 handler: collects a request within the limits, asks the router, writes
/// the answer. Malformed input never reaches it (the decoder's error handler answers 400 and closes).
final class HealthHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let router: HealthRouter
    private let role: ListenerRole
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    private var rejected = false
    private var requestTimer: Scheduled<Void>?

    init(router: HealthRouter, role: ListenerRole) {
        self.router = router
        self.role = role
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            bodyBytes = 0
            rejected = false
            let headerBytes = requestHead.headers.reduce(requestHead.uri.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            if headerBytes > router.configuration.maxHeaderBytes {
                reject(context, status: .requestHeaderFieldsTooLarge, "request headers exceed \(router.configuration.maxHeaderBytes) bytes\n")
            }
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
            if bodyBytes > router.configuration.maxBodyBytes && !rejected {
                reject(context, status: .payloadTooLarge, "request body exceeds \(router.configuration.maxBodyBytes) bytes\n")
            }
        case .end:
            requestTimer?.cancel()
            requestTimer = nil
            guard let head, !rejected else { return }
            self.head = nil
            let request = HealthRequest(method: head.method.rawValue, uri: head.uri,
                                        headers: head.headers.map { ($0.name, $0.value) })
            let keepAlive = head.isKeepAlive
            let version = head.version
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let (router, role) = (self.router, self.role)
            context.eventLoop.makeFutureWithTask { await router.handle(request, role: role) }.whenComplete { result in
                let (handler, context) = loopBound.value
                switch result {
                case .success(let response):
                    handler.write(context, response, version: version, keepAlive: keepAlive)
                case .failure:
                    handler.write(context, HealthResponse(status: 500, contentType: "text/plain", text: "internal error\n"),
                                  version: version, keepAlive: false)
                }
            }
        }
    }

    /// Starts the slow-client clock when a request begins to arrive.
    func channelReadComplete(context: ChannelHandlerContext) {
        if head != nil && requestTimer == nil {
            let timeout = router.configuration.requestTimeout
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            requestTimer = context.eventLoop.scheduleTask(in: .nanoseconds(timeout.totalNanoseconds)) {
                loopBound.value.close(promise: nil)
            }
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        requestTimer?.cancel()
        context.fireChannelInactive()
    }

    private func reject(_ context: ChannelHandlerContext, status: HTTPResponseStatus, _ message: String) {
        rejected = true
        write(context, HealthResponse(status: Int(status.code), contentType: "text/plain; charset=utf-8", text: message),
              version: head?.version ?? .http1_1, keepAlive: false)
    }

    private func write(_ context: ChannelHandlerContext, _ response: HealthResponse, version: HTTPVersion, keepAlive: Bool) {
        var headers = HTTPHeaders(response.headers)
        if !headers.contains(name: "Content-Length") { headers.add(name: "Content-Length", value: "\(response.body.count)") }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            done.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }
}
