import Logging
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveSystemd

/// Where the daemon listens: the configuration's `listen:`, or the sockets systemd passed (socket
/// activation), which replace them; and how many connections the descriptor limit leaves room for.
struct DaemonListeners {
    var listeners: [Listener]
    /// The sockets systemd passed, with their roles (`FileDescriptorName=`).
    var inherited: [(descriptor: Int32, role: ListenerRole)] = []
    var socketActivated: Bool { !inherited.isEmpty }

    /// The configured `listeners`, or those systemd passed; exits with 78 when one of those is not
    /// a listening stream socket.
    init(configured listeners: [Listener], logger: Logger) {
        self.listeners = listeners
        let activated = SocketActivation.sockets()
        guard !activated.isEmpty else { return }
        self.listeners = []
        for socket in activated {
            switch socket.address {
            case .tcp(let host, let port): self.listeners.append(.tcp(host: host, port: port))
            case .unix(let path): self.listeners.append(.unix(path: path, mode: 0))
            case .unsupported:
                Daemon.fail("weave-healthd: descriptor \(socket.descriptor) ('\(socket.name)') passed by systemd is not a listening stream socket",
                            Daemon.ExitCode.config)
            }
            inherited.append((socket.descriptor, ListenerRole(fileDescriptorName: socket.name)))
        }
        logger.info("Using \(activated.count) sockets passed by systemd; listen: in the configuration is ignored",
                    metadata: ["sockets": "\(zip(activated, self.listeners).map { "\($0.name)=\($1)" }.joined(separator: ", "))"])
    }

    /// The server's configuration, its connections within what the descriptor limit leaves the
    /// checks (sockets, plugin pipes) and the journal, and the connections to applications it keeps:
    /// half for the watches (one per watched application), half idle between scrapes.
    func serverConfiguration(logger: Logger) -> (server: HealthServerConfiguration, appConnections: ConnectionPool, watches: AppWatches) {
        var configuration = HealthServerConfiguration(listeners: listeners)
        let descriptors = DescriptorBudget.current()
        let connections = descriptors.serverConnections(wanted: configuration.maxConnections)
        if connections < configuration.maxConnections {
            configuration.maxConnections = connections
            configuration.reservedConnections = min(configuration.reservedConnections, connections / 4)
            logger.warning("The descriptor limit (\(descriptors.limit ?? 0)) allows only \(connections) connections; raise LimitNOFILE= for more")
        }
        let kept = descriptors.keptAppConnections(serverConnections: connections)
        return (configuration, ConnectionPool(capacity: kept - kept / 2), AppWatches(capacity: kept / 2))
    }
}
