import NIOCore
import NIOHTTP1
import WeaveHealthRoutes

/// One connection's HTTP/1.1 handler: collects a request within the limits, asks the router, writes
/// the answer. Malformed input never reaches it: the decoder's error handler answers 400, and the
/// error arriving here closes the connection.
///
/// Backpressure: a request is answered only while the connection is writable, so a client that
/// pipelines requests without reading the answers holds at most one answer in memory (the pipeline
/// handler stops reading meanwhile); one that does not read for the idle timeout is disconnected.
final class HealthHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// A complete request waiting to be answered.
    private struct Pending {
        let request: HealthRequest
        let version: HTTPVersion
        let keepAlive: Bool
    }

    private let router: HealthRouter
    /// The server's request limits (`maxHeaderBytes`, `maxBodyBytes`).
    private let limits: HealthServerConfiguration
    private let role: ListenerRole
    private let deadlines: ConnectionDeadlines
    /// Whether this connection is in the limiter's reserve: only probes are answered on it.
    private let probesOnly: Bool
    /// Whether this connection came to a Unix socket listener (its requests say so to the router).
    private let viaUnixSocket: Bool
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    /// The current request was answered already (rejected, or answered on its head): ignore the rest of it.
    private var answered = false
    private var pending: Pending?
    /// The watching request being answered (`?wait=`), cancelled when the connection closes.
    private var watch: Task<Void, Never>?

    /// A marker header on answers that must not be compressed (HEAD: the length of the identity body).
    static let noCompressionHeader = "x-weave-no-compression"

    init(router: HealthRouter, limits: HealthServerConfiguration, role: ListenerRole, deadlines: ConnectionDeadlines, probesOnly: Bool,
         viaUnixSocket: Bool) {
        self.router = router
        self.limits = limits
        self.role = role
        self.deadlines = deadlines
        self.probesOnly = probesOnly
        self.viaUnixSocket = viaUnixSocket
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            bodyBytes = 0
            answered = false
            let headerBytes = requestHead.headers.reduce(requestHead.uri.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            if headerBytes > limits.maxHeaderBytes {
                reject(context, status: .requestHeaderFieldsTooLarge, "request headers exceed \(limits.maxHeaderBytes) bytes\n")
            } else if requestHead.version == .http1_1 && requestHead.headers["Host"].count != 1 {
                // RFC 9112 §3.2: exactly one Host header in HTTP/1.1.
                reject(context, status: .badRequest, "an HTTP/1.1 request needs exactly one Host header\n")
            } else if let expectation = requestHead.headers.first(name: "Expect") {
                guard expectation.lowercased() == "100-continue" else {
                    reject(context, status: .expectationFailed, "only Expect: 100-continue is understood\n")
                    return
                }
                // The answer depends on the head alone (no endpoint takes a body), so it goes out
                // now instead of 100 Continue (RFC 9110 §10.1.1), and the connection closes after
                // it, since the client may still send the body.
                answered = true
                accept(context, Pending(request: request(requestHead), version: requestHead.version, keepAlive: false))
            }
        case .body(let buffer):
            guard !answered else { return }
            bodyBytes += buffer.readableBytes
            if bodyBytes > limits.maxBodyBytes {
                reject(context, status: .payloadTooLarge, "request body exceeds \(limits.maxBodyBytes) bytes\n")
            }
        case .end:
            guard let head, !answered else { return }
            self.head = nil
            accept(context, Pending(request: request(head), version: head.version, keepAlive: head.isKeepAlive))
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let pending {
            self.pending = nil
            answer(context, pending)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        watch?.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A parser error (already answered 400 by the error handler) or an I/O error: either way
        // the connection is done.
        context.close(promise: nil)
    }

    private func request(_ head: HTTPRequestHead) -> HealthRequest {
        var request = HealthRequest(method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) })
        request.viaUnixSocket = viaUnixSocket
        return request
    }

    /// Answers now if the client has read what came before, else once it has.
    private func accept(_ context: ChannelHandlerContext, _ request: Pending) {
        deadlines.requestReceived()
        if context.channel.isWritable {
            answer(context, request)
        } else {
            pending = request
            deadlines.waitingForClient()
        }
    }

    private func answer(_ context: ChannelHandlerContext, _ pending: Pending) {
        if probesOnly && router.route(for: pending.request.path)?.isProbe != true {
            var response = HealthResponse(status: 503, contentType: "text/plain; charset=utf-8",
                                          text: "too many connections; only /livez and /readyz are answered now\n")
            response.headers.append(("Retry-After", "1"))
            write(context, response, request: pending.request, version: pending.version, keepAlive: false)
            return
        }
        // Probes, 404 and 405 read snapshots: answered here, never queued behind renders on the pool.
        if let response = router.respondNow(pending.request, role: role) {
            write(context, response, request: pending.request, version: pending.version, keepAlive: pending.keepAlive)
            return
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let (router, role, request) = (self.router, self.role, pending.request)
        let promise = context.eventLoop.makePromise(of: HealthResponse.self)
        let task = Task { promise.succeed(await router.handle(request, role: role)) }
        if request.has("wait") {
            // A watch may be held for a minute: the connection waits meanwhile (a crowded server may
            // close it), and a client that leaves ends it.
            watch = task
            deadlines.holdingWatch()
        }
        promise.futureResult.whenComplete { result in
            let (handler, context) = loopBound.value
            handler.watch = nil
            switch result {
            case .success(let response):
                handler.write(context, response, request: request, version: pending.version, keepAlive: pending.keepAlive)
            case .failure:
                handler.write(context, HealthResponse(status: 500, contentType: "text/plain", text: "internal error\n"),
                              request: request, version: pending.version, keepAlive: false)
            }
        }
    }

    private func reject(_ context: ChannelHandlerContext, status: HTTPResponseStatus, _ message: String) {
        answered = true
        deadlines.requestReceived()
        write(context, HealthResponse(status: Int(status.code), contentType: "text/plain; charset=utf-8", text: message),
              request: nil, version: head?.version ?? .http1_1, keepAlive: false)
    }

    private func write(_ context: ChannelHandlerContext, _ response: HealthResponse, request: HealthRequest?, version: HTTPVersion,
                       keepAlive: Bool) {
        var headers = HTTPHeaders(response.headers)
        if !headers.contains(name: "Content-Length") { headers.add(name: "Content-Length", value: "\(response.body.readableBytes)") }
        if request?.method == "HEAD" { headers.add(name: Self.noCompressionHeader, value: "1") }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if response.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if keepAlive {
            deadlines.responseSent()
        } else {
            deadlines.waitingForClient() // closes it if the client never takes the answer
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            done.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }
}
