import CMachine
import Logging
import NIOPosix
import ServiceLifecycle
import UnixSignals
import WeaveContainerRoutes
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveMemoryPressure
import WeaveObservability
import WeavePrometheus
import WeaveSupport
import WeaveSystemd

/// weave-healthd: exports a WeaveDI container's figures and health checks as Prometheus metrics
/// and health endpoints, and the applications' on the host. `main.swift` runs it; everything else
/// here is what it composes.
package enum Daemon {
    static let usage = """
        Usage: weave-healthd [--config FILE]
               weave-healthd --check-config FILE
               weave-healthd --reload PID
               weave-healthd --print-default-config | --version | --help

        Without --config it runs its embedded default configuration: 127.0.0.1:\(Defaults.port), the
        applications that serve a socket in \(AppSocket.defaultDirectory), and checks of memory
        pressure, disk space on /, its own container and its own port.
        Exit status: 0 after a graceful shutdown (SIGTERM, SIGINT), 64 on a usage error,
        78 on a bad configuration (printed as file:line:column: message). SIGHUP reloads the file.
        --reload PID (the units' ExecReload=, with $MAINPID) sends the SIGHUP and waits for the daemon's
        verdict in $RUNTIME_DIRECTORY: 0 when it reloaded, 1 (and why) when it kept its configuration.

        """

    enum ExitCode {
        static let usage: Int32 = 64
        static let config: Int32 = 78
    }

    static func fail(_ message: String, _ code: Int32) -> Never {
        let line = message + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(code)
    }

    /// Runs the daemon with these command-line arguments (without the program's name), until a
    /// graceful shutdown; it never returns (the process exits with the status `usage` describes).
    package static func run(arguments: [String]) async -> Never {
        // Scrapes of applications allocate buffers of megabytes. The heap keeps them between scrapes (mapping
        // and faulting them in afresh cost a third of a scrape's CPU), and HeapTrimmer gives them back once
        // scrapes stop (Benchmarks/README.md). First, before any thread allocates.
        _ = weave_keep_freed_memory(32 << 20, 256 << 20)
        var arguments = arguments
        var configPath: String?
        var checkOnly = false
        while let argument = arguments.first {
            arguments.removeFirst()
            switch argument {
            case "--config", "--check-config":
                guard let value = arguments.first else { fail("weave-healthd: \(argument) needs a file; see --help", ExitCode.usage) }
                arguments.removeFirst()
                configPath = value
                checkOnly = argument == "--check-config"
            case "--reload":
                guard let value = arguments.first, arguments.count == 1 else { fail("weave-healthd: --reload needs the daemon's process id; see --help", ExitCode.usage) }
                let (status, message) = await ReloadVerdict.ask(pid: value)
                if status == 0 { print(message) } else { fail(message, status) }
                exit(status)
            case "--version":
                print("weave-healthd \(Defaults.version)")
                exit(0)
            case "--print-default-config":
                print(Defaults.configuration, terminator: "")
                exit(0)
            case "--help", "-h":
                print(usage, terminator: "")
                exit(0)
            default:
                fail("weave-healthd: unknown argument '\(argument)'; see --help", ExitCode.usage)
            }
        }

        let configuration: DaemonConfiguration
        do {
            configuration = try configPath.map { path throws(ConfigurationError) in try ConfigurationLoader.load(path: path) }
                ?? ConfigurationLoader(file: "<embedded default>", text: Defaults.configuration).parse()
        } catch {
            fail("\(error)", ExitCode.config)
        }
        if checkOnly {
            let apps = configuration.apps
            print("\(configPath!): OK, \(configuration.checks.count) checks, \(apps.targets.count) applications"
                + (apps.directory.map { " plus those in \($0)" } ?? "")
                + ", listening on \(configuration.listeners.map(\.description).joined(separator: ", "))")
            exit(0)
        }

        let logLevel = getenv("WEAVE_LOG_LEVEL").flatMap { Logger.Level(rawValue: String(cString: $0)) } ?? .info
        let logTarget: JournalLogHandler.Target
        switch getenv("WEAVE_LOG_TARGET").map({ String(cString: $0) }) ?? "auto" {
        case "auto": logTarget = .automatic
        case "journal": logTarget = .journal
        case "stderr": logTarget = .standardError
        case let other: fail("weave-healthd: WEAVE_LOG_TARGET must be auto, journal or stderr, not '\(other)'", ExitCode.usage)
        }
        // The daemon's one writer: every handler's entries go through its lanes, in order.
        let journal = JournalWriter()
        LoggingSystem.bootstrap { label in
            var handler = JournalLogHandler(label: label, identifier: "weave-healthd", target: logTarget, writer: journal)
            handler.logLevel = logLevel
            return handler
        }
        let logger = Logger(label: "weave.healthd")

        // Sockets passed by systemd replace the configured listeners.
        var listeners = configuration.listeners
        var inheritedSockets: [(descriptor: Int32, role: ListenerRole)] = []
        let activated = SocketActivation.sockets()
        if !activated.isEmpty {
            listeners = []
            for socket in activated {
                switch socket.address {
                case .tcp(let host, let port): listeners.append(.tcp(host: host, port: port))
                case .unix(let path): listeners.append(.unix(path: path, mode: 0))
                case .unsupported:
                    fail("weave-healthd: descriptor \(socket.descriptor) ('\(socket.name)') passed by systemd is not a listening stream socket",
                         ExitCode.config)
                }
                inheritedSockets.append((socket.descriptor, ListenerRole(fileDescriptorName: socket.name)))
            }
            logger.info("Using \(activated.count) sockets passed by systemd; listen: in the configuration is ignored",
                        metadata: ["sockets": "\(zip(activated, listeners).map { "\($0.name)=\($1)" }.joined(separator: ", "))"])
        }

        let trimmer = HeapTrimmer()

        let notifier = SystemdNotifier()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let lifecycle = ServerLifecycle()
        var serverConfiguration = HealthServerConfiguration(listeners: listeners)
        // Connections must leave descriptors for the checks (sockets, plugin pipes) and the journal.
        let descriptors = DescriptorBudget.current()
        let serverConnections = descriptors.serverConnections(wanted: serverConfiguration.maxConnections)
        if serverConnections < serverConfiguration.maxConnections {
            serverConfiguration.maxConnections = serverConnections
            serverConfiguration.reservedConnections = min(serverConfiguration.reservedConnections, serverConnections / 4)
            logger.warning("The descriptor limit (\(descriptors.limit ?? 0)) allows only \(serverConnections) connections; raise LimitNOFILE= for more")
        }
        let appConnections = ConnectionPool(capacity: descriptors.keptAppConnections(serverConnections: serverConnections))
        // Every blocking library call of the daemon, on a few threads of their own, whatever is stuck.
        let blocking = BlockingCalls()
        let owners = AppOwners(file: StateFile.inStateDirectory(AppOwners.fileName, what: AppOwners.what))
        // What the previous daemon left in $STATE_DIRECTORY: where it stopped reading each application's
        // events, which applications were stopped with their unit enabled, and their last slow chains.
        let appEvents = AppEventJournal(limit: configuration.logRateLimit,
                                        file: StateFile.inStateDirectory(EventPositions.fileName, what: EventPositions.what),
                                        slowChains: AppSlowChains(file: StateFile.inStateDirectory(AppSlowChains.fileName, what: AppSlowChains.what)))
        let appLifecycle = AppLifecycle(file: StateFile.inStateDirectory(AppLifecycle.fileName, what: AppLifecycle.what))
        let source = DaemonSource(await Runtime(configuration: configuration, group: group, connections: appConnections,
                                               blocking: blocking, owners: owners, events: appEvents, lifecycle: appLifecycle,
                                               ownSockets: serverConfiguration.listeners.compactMap(\.unixPath), trimmer: trimmer))
        var pressure = MemoryPressureConfiguration()
        pressure.trigger = configuration.memoryPressureTrigger
        let identity = ServiceIdentity(serviceID: "weave-healthd", description: "health of the checks weave-healthd runs",
                                       version: Defaults.version)
        let reloadOutcomes = ReloadMetrics()
        // Everything /metrics shows, in one place; each family has one of these as its home. The daemon's
        // own collectors come first; the applications' families join them where FamilyAdmission lets them.
        let own: [any MetricCollector] = [
            ContainerMetrics(buckets: { source.runtime.configuration.resolveBuckets }) { source.runtime.container.statistics() },
            HealthMetrics { source.runtime.monitor.latestReport },
        ] + DaemonOnlyCollectors.all(source: source, reloads: reloadOutcomes, journal: journal) + [
            ProcessMetrics(),
            BuildInfo(identity: identity),
        ]
        let collectors: [any MetricCollector] = [DaemonExposition(own: own, fleet: { source.runtime.apps },
                                                            textfiles: Textfiles(blocking: blocking) { source.runtime.configuration.textfile })]
        let history = StatusHistory()
        let router = HealthRouter(policy: configuration.policy(listeners: listeners), identity: identity, collectors: collectors, source: source,
                                  lifecycle: lifecycle,
                                  routes: [DaemonStatusPage(source: source, history: history, identity: identity).route,
                                           .dependencies { source.runtime.container.statistics() },
                                           DependencyWhy(source: source, chains: appEvents.slowChains).route])
        let server = HealthServer(router: router, configuration: serverConfiguration, group: group, inheritedSockets: inheritedSockets,
                                  logger: Logger(label: "weave.healthd.http"))
        let (reloads, reloadContinuation) = AsyncStream<Runtime>.makeStream()

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            // Listed in start order; graceful shutdown runs in reverse: STOPPING=1 goes out, reloads stop,
            // then the server fails readiness and drains, then the checks are cancelled, then the
            // memory-pressure watch stops.
            .init(service: MemoryPressureMonitor(configuration: pressure) { source.runtime.container.relieveMemoryPressure() }),
            .init(service: MonitorService(source: source, lifecycle: lifecycle, reloads: reloads, listening: { server.boundListeners != nil })),
            .init(service: AppHealthService(source: source)),
            .init(service: StatusHistoryService(source: source, history: history)),
            .init(service: trimmer),
            .init(service: server),
            .init(service: ReloadService(path: configPath, notifier: notifier, source: source, router: router, listeners: listeners,
                                         socketActivated: !activated.isEmpty, group: group, connections: appConnections, blocking: blocking, trimmer: trimmer,
                                         reloaded: reloadContinuation, outcomes: reloadOutcomes, logger: logger)),
            .init(service: NotifyService(notifier: notifier, server: server, source: source, lifecycle: lifecycle, group: group,
                                         logger: logger)),
        ]
        #if DEBUG
        if TestHooksService.isEnabled {
            services.append(.init(service: TestHooksService(source: source, group: group, logger: logger)))
        }
        #endif
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Within 2 s of SIGTERM in all (docs/configuration.md): what has not drained in 1.5 s is cancelled,
        // and the journal gets what is left of the 2 s (`end`).
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(1_500)
        /// Ends the process once the last entries are written (unless journald is stalled: shutdown must not
        /// wait for it). `_exit`, not `exit`: a blocking call may still run on one of `blocking`'s threads (an
        /// https check inside OpenSSL), and `exit`'s handlers would tear OpenSSL down under it.
        func end(_ status: Int32) -> Never {
            journal.flush(timeout: .milliseconds(300))
            fflush(nil)
            _exit(status)
        }

        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            logger.error("weave-healthd stopped: \(error)")
            end(1)
        }
        logger.info("weave-healthd stopped", metadata: WeaveEvent.shutdown.metadata)
        end(0)
    }
}
