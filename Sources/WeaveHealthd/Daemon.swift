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
        let options = await DaemonOptions.parse(arguments)
        let configuration = options.configuration()
        let journal = DaemonLogging.bootstrap()
        let logger = Logger(label: "weave.healthd")
        let listening = DaemonListeners(configured: configuration.listeners, logger: logger)
        let (serverConfiguration, appConnections, watches) = listening.serverConfiguration(logger: logger)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let trimmer = HeapTrimmer()
        let shared = DaemonShared.atStart(configuration: configuration, group: group, connections: appConnections, watches: watches,
                                          ownSockets: serverConfiguration.listeners.compactMap(\.unixPath), trimmer: trimmer)
        let source = DaemonSource(await Runtime(configuration: configuration, shared: shared))
        let identity = ServiceIdentity(serviceID: "weave-healthd", description: "health of the checks weave-healthd runs",
                                       version: Defaults.version)
        let (lifecycle, history, reloadOutcomes) = (ServerLifecycle(), StatusHistory(), ReloadMetrics())
        let router = HealthRouter(policy: configuration.policy(listeners: listening.listeners), identity: identity,
                                  collectors: collectors(source: source, shared: shared, reloads: reloadOutcomes, journal: journal, identity: identity),
                                  source: source, lifecycle: lifecycle,
                                  routes: [DaemonStatusPage(source: source, history: history, identity: identity).route,
                                           .dependencies { source.runtime.container.statistics() },
                                           DependencyWhy(source: source, chains: shared.events.slowChains).route])
        let server = HealthServer(router: router, configuration: serverConfiguration, group: group, inheritedSockets: listening.inherited,
                                  logger: Logger(label: "weave.healthd.http"))
        let (reloads, reloadContinuation) = AsyncStream<Runtime>.makeStream()
        let notifier = SystemdNotifier()
        var pressure = MemoryPressureConfiguration()
        pressure.trigger = configuration.memoryPressureTrigger
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
            .init(service: ReloadService(path: options.path, notifier: notifier, source: source, router: router, listening: listening,
                                         shared: shared, reloaded: reloadContinuation, outcomes: reloadOutcomes, logger: logger)),
            .init(service: NotifyService(notifier: notifier, server: server, source: source, lifecycle: lifecycle, group: group, logger: logger)),
        ]
        #if DEBUG
        if TestHooksService.isEnabled { services.append(.init(service: TestHooksService(source: source, group: group, logger: logger))) }
        #endif
        await runUntilShutdown(services, journal: journal, logger: logger)
    }

    /// Everything /metrics shows, in one place; each family has one of these as its home. The daemon's
    /// own collectors come first; the applications' families join them where FamilyAdmission lets them.
    private static func collectors(source: DaemonSource, shared: DaemonShared, reloads: ReloadMetrics, journal: JournalWriter,
                                   identity: ServiceIdentity) -> [any MetricCollector] {
        let own: [any MetricCollector] = [
            ContainerMetrics(buckets: { source.runtime.configuration.resolveBuckets }) { source.runtime.container.statistics() },
            HealthMetrics { source.runtime.monitor.latestReport },
        ] + DaemonOnlyCollectors.all(source: source, reloads: reloads, journal: journal) + [
            ProcessMetrics(),
            BuildInfo(identity: identity),
        ]
        return [DaemonExposition(own: own, fleet: { source.runtime.apps },
                                 textfiles: Textfiles(blocking: shared.blocking) { source.runtime.configuration.textfile })]
    }

    /// Runs `services` until a graceful shutdown (SIGTERM, SIGINT), then ends the process: within 2 s
    /// of SIGTERM in all (docs/configuration.md): what has not drained in 1.5 s is cancelled, and the
    /// journal gets what is left of the 2 s.
    private static func runUntilShutdown(_ services: [ServiceGroupConfiguration.ServiceConfiguration], journal: JournalWriter,
                                         logger: Logger) async -> Never {
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .milliseconds(1_500)
        /// Ends the process once the last entries are written (unless journald is stalled: shutdown must not
        /// wait for it). `_exit`, not `exit`: a blocking call may still run on one of the blocking lanes (an
        /// https check inside OpenSSL), and `exit`'s handlers would tear OpenSSL down under it.
        func end(_ status: Int32) -> Never {
            journal.flush(timeout: .milliseconds(300))
            fflush(nil)
            _exit(status)
        }
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch {
            logger.error("weave-healthd stopped: \(error)")
            end(1)
        }
        logger.info("weave-healthd stopped", metadata: WeaveEvent.shutdown.metadata)
        end(0)
    }
}
