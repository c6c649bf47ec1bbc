public import Logging
public import NIOCore
import NIOExtras
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
public import ServiceLifecycle
public import WeaveHealthRoutes
import WeaveSupport

/// The HTTP server of the health endpoints, as a swift-service-lifecycle `Service`: `run()` binds
/// the listeners (or adopts sockets passed in), serves until graceful shutdown, then removes its
/// Unix socket files, fails readiness, stops accepting, lets in-flight requests finish, and returns.
///
/// Only a graceful shutdown removes the socket files. Any other end (cancellation because another
/// service of the group failed, a bind that failed, a crash) leaves them: a socket nobody listens
/// on is how a failed application stays visible to weave-healthd as down, with the reason, instead
/// of vanishing. The next start replaces such a leftover.
public final class HealthServer: Service, Sendable {
    public let router: HealthRouter
    /// Its listeners, limits and clocks.
    public let configuration: HealthServerConfiguration
    private let group: any EventLoopGroup
    private let inherited: [(descriptor: Int32, role: ListenerRole)]
    private let logger: Logger
    private let boundAddresses = Locked<[String]?>(nil)
    /// The Unix socket files `run()` bound.
    private let socketFiles = Locked<[UnixSocketFile]>([])
    /// The open connections, against `HealthServerConfiguration.maxConnections`.
    public let connections: ConnectionLimiter

    /// `inheritedSockets`: already-bound listening descriptors to use instead of binding
    /// `configuration.listeners` (socket activation), each with the endpoints it serves.
    public init(router: HealthRouter, configuration: HealthServerConfiguration, group: any EventLoopGroup,
                inheritedSockets: [(descriptor: Int32, role: ListenerRole)] = [], logger: Logger = Logger(label: "weave.health.server")) {
        self.router = router
        self.configuration = configuration
        self.group = group
        self.inherited = inheritedSockets
        self.logger = logger
        connections = ConnectionLimiter(maximum: configuration.maxConnections, reserved: configuration.reservedConnections)
    }

    /// The addresses listened on, or nil while `run()` has not bound them yet.
    public var boundListeners: [String]? { boundAddresses.withLock { $0 } }

    public func run() async throws { try await run(whenListening: {}) }

    /// Serves until graceful shutdown; `whenListening` is called once every listener is bound.
    public func run(whenListening: @Sendable () -> Void) async throws {
        // One quiescing helper per listening channel: each tracks the connections of one server channel.
        var helpers: [ServerQuiescingHelper] = []
        var channels: [any Channel] = []
        do {
            if inherited.isEmpty {
                for listener in configuration.listeners {
                    let helper = ServerQuiescingHelper(group: group)
                    helpers.append(helper)
                    channels.append(try await bind(makeBootstrap(helper, role: .all), listener))
                }
            } else {
                for (descriptor, role) in inherited {
                    let helper = ServerQuiescingHelper(group: group)
                    helpers.append(helper)
                    channels.append(try await makeBootstrap(helper, role: role).withBoundSocket(descriptor).get())
                }
            }
        } catch {
            for channel in channels { try? await channel.close() }
            throw error
        }
        let addresses = channels.map { $0.localAddress.map(Self.describe) ?? "?" }
        boundAddresses.withLock { $0 = addresses }
        logger.info("Listening", metadata: ["addresses": "\(addresses.joined(separator: ", "))"])
        whenListening()

        let quiesce: @Sendable () -> Void = { [helpers] in for helper in helpers { helper.initiateShutdown(promise: nil) } }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                for channel in channels { try? await channel.closeFuture.get() }
            } onCancel: {
                quiesce()
            }
        } onGracefulShutdown: { [router, logger, socketFiles] in
            // First, so a reader finds no socket (it left) rather than one that refuses (it is down).
            // Each only while it is still the socket bound here: another process may have bound the path since.
            for file in socketFiles.withLock({ $0 }) { file.remove() }
            router.lifecycle.markStopping()
            logger.info("Graceful shutdown: readiness fails, in-flight requests finish")
            quiesce()
        }
    }

    private func makeBootstrap(_ quiesce: ServerQuiescingHelper, role: ListenerRole) -> ServerBootstrap {
        let (router, connections) = (self.router, self.connections)
        return ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelInitializer { channel in
                let viaUnixSocket = if case .unixDomainSocket = channel.localAddress { true } else { false }
                // The peer process and user of a Unix socket connection (on the event loop this completes at once).
                let peer: EventLoopFuture<(pid: Int32, uid: UInt32?)> = if viaUnixSocket, let provider = channel as? any SocketOptionProvider {
                    provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
                        .map { (credentials: (pid: Int32, uid: UInt32, gid: UInt32)) in (credentials.pid, credentials.uid) } // struct ucred
                        .recover { _ in (-1, nil) }
                } else {
                    channel.eventLoop.makeSucceededFuture((-1, nil))
                }
                return peer.flatMapThrowing { peer in
                    let entry = ConnectionLimiter.Entry(peer: peer.pid, user: peer.uid) { channel.close(promise: nil) }
                    let admission = connections.admit(entry)
                    // Refused: accepted only to be closed at once, so the descriptor is free again.
                    guard admission != .refused else { throw ChannelError.inappropriateOperationForState }
                    channel.closeFuture.whenComplete { _ in connections.release(entry) }
                    let configuration = self.configuration
                    let probesOnly = admission == .probesOnly
                    // A connection in the reserve gets short clocks: it is for a probe, which asks at once.
                    let deadlines = ConnectionDeadlines(
                        requestTimeout: probesOnly ? min(configuration.requestTimeout, .seconds(2)) : configuration.requestTimeout,
                        idleTimeout: probesOnly ? min(configuration.idleTimeout, .seconds(2)) : configuration.idleTimeout,
                        entry: entry)
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(deadlines)
                    try sync.configureHTTPServerPipeline(withErrorHandling: true)
                    try sync.addHandler(HTTPResponseCompressor(responseCompressionPredicate: { head, _ in
                        guard head.headers.contains(name: HealthHTTPHandler.noCompressionHeader) else { return .compressIfPossible }
                        head.headers.remove(name: HealthHTTPHandler.noCompressionHeader)
                        return .doNotCompress
                    }))
                    try sync.addHandler(HealthHTTPHandler(router: router, limits: configuration, role: role, deadlines: deadlines,
                                                          probesOnly: probesOnly, viaUnixSocket: viaUnixSocket))
                }
            }
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
    }

    private func bind(_ bootstrap: ServerBootstrap, _ listener: Listener) async throws -> any Channel {
        switch listener {
        case .tcp(let host, let port):
            return try await bootstrap.bind(host: host, port: port).get()
        case .unix(let path, let mode):
            // Bound here rather than by NIO, which would remove whatever socket is at the path on close.
            let (descriptor, file) = try UnixSocketFile.bound(at: path, mode: mode)
            socketFiles.withLock { $0.append(file) }
            // An answer larger than the default send buffer (208 KiB; a `/metrics` of 100 services is
            // about 250 KB) would go out in two writes with a wait for the reader between them. The
            // kernel caps the size at net.core.wmem_max and doubles it: 416 KiB with Debian's default.
            return try await bootstrap.childChannelOption(.socketOption(.so_sndbuf), value: HealthServer.unixSendBuffer)
                .withBoundSocket(descriptor).get()
        }
    }

    /// The send buffer asked for on connections to a Unix socket listener (an application's endpoint).
    static let unixSendBuffer: SocketOptionValue = 1 << 20

    static func describe(_ address: SocketAddress) -> String {
        switch address {
        case .unixDomainSocket: return "unix:\(address.pathname ?? "?")"
        default: return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        }
    }
}
