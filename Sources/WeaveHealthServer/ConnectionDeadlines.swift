import NIOCore
import WeaveSupport

/// One connection's clocks, kept on the raw bytes (first in the pipeline), so that no trickle of
/// bytes can hold a connection open:
/// - before a request (a new connection, or after a response): at most `idleTimeout` until its
///   first byte;
/// - from a request's first byte to its end: at most `requestTimeout`, however the bytes are spaced;
/// - while a response waits for the client to read what was already sent: at most `idleTimeout`.
/// When one runs out, the connection is closed. It tells the limiter's entry when the connection
/// is answering a request (busy) and when it waits (idle: a crowded server may close it).
final class ConnectionDeadlines: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        case waitingForRequest
        case receivingRequest
        case handlingRequest
    }

    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var state = State.waitingForRequest
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    private let entry: ConnectionLimiter.Entry?

    init(requestTimeout: Duration, idleTimeout: Duration, entry: ConnectionLimiter.Entry? = nil) {
        self.requestTimeout = .nanoseconds(requestTimeout.totalNanoseconds)
        self.idleTimeout = .nanoseconds(idleTimeout.totalNanoseconds)
        self.entry = entry
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        arm(idleTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state == .waitingForRequest {
            state = .receivingRequest
            arm(requestTimeout)
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    /// A whole request arrived: no clock runs while it is answered.
    func requestReceived() {
        state = .handlingRequest
        entry?.mark(busy: true)
        timer?.cancel()
        timer = nil
    }

    /// The request is a watch, held until something changes: the connection counts as waiting, so a
    /// crowded server may close it (no clock runs: the watch's own wait bounds it).
    func holdingWatch() {
        entry?.mark(busy: false)
    }

    /// The answer is written but the client has not read what came before: it has `idleTimeout` to.
    func waitingForClient() {
        entry?.mark(busy: false)
        arm(idleTimeout)
    }

    /// The answer went out on a connection that stays open: the next request may begin.
    func responseSent() {
        state = .waitingForRequest
        entry?.mark(busy: false)
        arm(idleTimeout)
    }

    private func arm(_ timeout: TimeAmount) {
        timer?.cancel()
        guard let context else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
    }
}
