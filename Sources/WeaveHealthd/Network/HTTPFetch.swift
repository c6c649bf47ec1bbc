import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import WeaveSupport

/// One HTTP/1.1 GET, over TCP or a Unix socket, with a deadline for the whole exchange (connect,
/// request, response) and a cap on the body. The http check and the scrapes of applications both
/// fetch through it. Without a `pool` it asks with `Connection: close`; with one, it takes the
/// target's idle connection when there is one and gives it back after a complete response.
struct HTTPFetch: Sendable {
    enum Target: Sendable, Hashable, CustomStringConvertible {
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
        /// Whether the server lets the connection carry another request.
        var keepAlive = false
        /// Its `Content-Type`, if it gave one.
        var contentType: String? = nil
        /// The process serving a Unix socket (`SO_PEERCRED`); nil over TCP or when the kernel does not say.
        var peerPID: Int32? = nil
        /// Its `X-Weave-Index`: the endpoint can be watched (`AppWatches`).
        var weaveIndex: String? = nil
    }

    let target: Target
    let timeout: Duration
    let maxBodyBytes: Int
    let overflow: Overflow
    let group: any EventLoopGroup
    var pool: ConnectionPool? = nil

    func get(_ path: String, host: String, headers extra: [(String, String)] = []) async throws -> Response {
        let deadline = ContinuousClock.now + timeout
        if let pool, let idle = pool.take(target) {
            let promise = idle.eventLoop.makePromise(of: Response.self)
            do {
                try await idle.eventLoop.submit { [maxBodyBytes, overflow] in
                    // On the event loop: a connection still open here tells the collector when it closes.
                    guard idle.isActive else { throw StaleConnection() }
                    try ResponseCollector.collectNext(on: idle, promise: promise, maxBodyBytes: maxBodyBytes, overflow: overflow)
                }.get()
                return try await exchange(on: idle, promise, path, host: host, headers: extra, within: timeout, reused: true)
            } catch is StaleConnection {
                // The server closed the idle connection meanwhile: once more, on a new one.
                promise.fail(StaleConnection()) // completes it if nothing else did
                idle.close(promise: nil)
            }
        }
        let left = deadline - .now
        guard left > .zero else { throw FetchFailure("no complete response within \(timeout)") }
        let loop = group.next()
        let promise = loop.makePromise(of: Response.self)
        var bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(left.totalNanoseconds))
            .channelInitializer { [maxBodyBytes, overflow] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try ResponseCollector.install(on: channel, promise: promise, maxBodyBytes: maxBodyBytes, overflow: overflow)
                }
            }
        if pool != nil {
            // A connection kept idle keeps its receive buffer too, so it is small (16 KiB); up to 16
            // reads per wake-up take an application's exposition in one or two.
            bootstrap = bootstrap.channelOption(.maxMessagesPerRead, value: 16)
                .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1_024, initial: 16_384, maximum: 16_384))
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
        do {
            return try await exchange(on: channel, promise, path, host: host, headers: extra, within: deadline - .now, reused: false)
        } catch is StaleConnection {
            throw FetchFailure(FetchFailure.closedEarly)
        }
    }

    /// Sends the request on `channel`, whose collector completes `promise`; the connection then goes
    /// back to the pool or is closed. On a `reused` connection, a close or reset before any byte of
    /// the response is the server's idle timeout racing the request: `StaleConnection`, asked again.
    private func exchange(on channel: any Channel, _ promise: EventLoopPromise<Response>, _ path: String, host: String,
                          headers extra: [(String, String)], within timeout: Duration, reused: Bool) async throws -> Response {
        let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(max(timeout.totalNanoseconds, 0))) { [limit = self.timeout] in
            promise.fail(FetchFailure("no complete response within \(limit)"))
        }
        promise.futureResult.whenComplete { result in
            deadline.cancel()
            if case .failure = result { channel.close(promise: nil) }
        }
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: host)
        fields.add(name: "User-Agent", value: "weave-healthd/\(Defaults.version)")
        if pool == nil { fields.add(name: "Connection", value: "close") }
        for (name, value) in extra { fields.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: fields)), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        var response = try await withTaskCancellationHandler {
            do {
                return try await promise.futureResult.get()
            } catch let failure as FetchFailure where failure.beforeAnswer {
                throw StaleConnection()
            } catch let reset as ResetBeforeAnswer {
                if reused { throw StaleConnection() }
                throw reset.error
            }
        } onCancel: {
            promise.fail(CancellationError())
        }
        if case .unix = target, let provider = channel as? any SocketOptionProvider,
           let credentials: (pid: Int32, uid: UInt32, gid: UInt32) = // struct ucred
               try? await provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)).get(),
           credentials.pid > 0 {
            response.peerPID = credentials.pid
        }
        // Back in the pool before the caller has the response, so its next request finds it there;
        // only after a whole response the server keeps the connection open for.
        if let pool, response.keepAlive, channel.isActive {
            pool.put(channel, for: target)
        } else {
            channel.close(promise: nil)
        }
        return response
    }
}

/// A connection closed before any byte of its response came back: on a connection taken from the
/// pool, the server's idle timeout (or a crowded server making room for a newcomer), worth one more
/// try on a new connection.
private struct StaleConnection: Error {}

/// A connection reset (or broken) before any byte of its response came back: stale when it was taken
/// from the pool; else `error` is the answer.
private struct ResetBeforeAnswer: Error {
    let error: any Error
}

/// Idle connections to the applications, at most one per target and `capacity` in all, for the
/// next scrape or health round: a new connection costs an application about as much CPU as
/// rendering its metrics (Benchmarks/README.md). Past the capacity (the descriptors
/// `DescriptorBudget` leaves them), a connection is closed after its response. A connection that
/// closed while idle is dropped when taken. One pool serves every runtime, so a reload keeps them.
final class ConnectionPool: Sendable {
    private let idle = Mutex<[HTTPFetch.Target: any Channel]>([:])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 0)
    }

    /// The target's idle connection, if it is still open; it is the caller's until it is put back.
    func take(_ target: HTTPFetch.Target) -> (any Channel)? {
        guard let channel = idle.withLock({ $0.removeValue(forKey: target) }) else { return nil }
        guard channel.isActive else {
            channel.close(promise: nil)
            return nil
        }
        return channel
    }

    /// Keeps `channel` as the target's idle connection (one that was there is closed), or closes it
    /// when the pool holds `capacity` connections of other targets.
    func put(_ channel: any Channel, for target: HTTPFetch.Target) {
        let closing = idle.withLock { idle -> (any Channel)? in
            guard idle[target] != nil || idle.count < capacity else { return channel }
            return idle.updateValue(channel, forKey: target)
        }
        closing?.close(promise: nil)
    }

    /// Closes the idle connections of targets not in `targets` (applications that left).
    func closeAll(except targets: Set<HTTPFetch.Target> = []) {
        let closing = idle.withLock { idle in
            let gone = idle.filter { !targets.contains($0.key) }
            for target in gone.keys { idle[target] = nil }
            return Array(gone.values)
        }
        for channel in closing { channel.close(promise: nil) }
    }

    deinit { closeAll() }
}

/// Why a fetch failed, in an operator's words.
struct FetchFailure: Error, CustomStringConvertible {
    static let closedEarly = "the connection closed before a complete response"
    let description: String
    /// The connection closed before any of the response came back.
    var beforeAnswer = false
    /// The body was larger than the cap.
    var tooLarge = false
    init(_ description: String) { self.description = description }
}

/// Collects the responses of one connection, one at a time: status and body, up to the cap.
/// Between them (the connection idle in the pool) nothing may arrive: a byte or an error then
/// closes the connection, which the pool drops when it is next taken, rather than reading the
/// stray bytes as the start of the next response.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// Adds a collector for the first response to a new connection's pipeline, on its event loop.
    static func install(on channel: any Channel, promise: EventLoopPromise<HTTPFetch.Response>, maxBodyBytes: Int,
                        overflow: HTTPFetch.Overflow) throws {
        let collector = ResponseCollector()
        collector.collect(into: promise, maxBodyBytes: maxBodyBytes, overflow: overflow)
        try channel.pipeline.syncOperations.addHandler(collector)
    }

    /// Has the collector of a connection taken from the pool collect its next response, on its event loop.
    static func collectNext(on channel: any Channel, promise: EventLoopPromise<HTTPFetch.Response>, maxBodyBytes: Int,
                            overflow: HTTPFetch.Overflow) throws {
        try channel.pipeline.syncOperations.handler(type: ResponseCollector.self)
            .collect(into: promise, maxBodyBytes: maxBodyBytes, overflow: overflow)
    }

    /// The response being collected; nil while the connection is idle.
    private var promise: EventLoopPromise<HTTPFetch.Response>?
    private var maxBodyBytes = 0
    private var overflow = HTTPFetch.Overflow.fail
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    private func collect(into promise: EventLoopPromise<HTTPFetch.Response>, maxBodyBytes: Int, overflow: HTTPFetch.Overflow) {
        self.promise = promise
        self.maxBodyBytes = maxBodyBytes
        self.overflow = overflow
        head = nil
        body = []
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let promise else {
            context.close(promise: nil) // spoke while idle
            return
        }
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
                    var failure = FetchFailure("response larger than \(maxBodyBytes) bytes")
                    failure.tooLarge = true
                    promise.fail(failure)
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
        guard let head, let promise else { return }
        self.promise = nil
        promise.succeed(HTTPFetch.Response(status: Int(head.status.code), body: body, keepAlive: head.isKeepAlive,
                                             contentType: head.headers.first(name: "content-type"),
                                             weaveIndex: head.headers.first(name: "x-weave-index")))
        body = []
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let promise else {
            context.close(promise: nil) // an error while idle: the connection is not reused
            return
        }
        switch error {
        case let error as NIOHTTPDecoderError where error == .unsolicitedResponse:
            promise.fail(FetchFailure("not an HTTP response (it spoke before it was asked)"))
        case let error as HTTPParserError where error == .invalidEOFState:
            promise.fail(closedEarly)
        case is HTTPParserError, is NIOHTTPDecoderError:
            promise.fail(FetchFailure("not an HTTP response (\(error))"))
        case let error as IOError where head == nil && (error.errnoCode == ECONNRESET || error.errnoCode == EPIPE):
            promise.fail(ResetBeforeAnswer(error: error))
        default:
            promise.fail(error)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(closedEarly)
    }

    private var closedEarly: FetchFailure {
        var failure = FetchFailure(FetchFailure.closedEarly)
        failure.beforeAnswer = head == nil
        return failure
    }
}
