import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import WeaveDI
import WeaveHealthServer
import WeaveSupport
import WeaveSystemd

/// Runs the current runtime's health checks: one round at startup (then readiness may pass), then
/// on their intervals; a reload swaps in a runtime whose first round has already run (see
/// `ReloadService`), and this moves the schedule to it. Cancelled at shutdown.
///
/// The first round waits until `listening` (at most `listenTimeout`): a check of the daemon's own
/// port, as in the embedded configuration, would otherwise race the bind, fail, and hold readiness
/// down until its next round.
struct MonitorService: Service {
    let source: DaemonSource
    let lifecycle: ServerLifecycle
    let reloads: AsyncStream<Void>
    let listening: @Sendable () -> Bool
    var listenTimeout: Duration = .seconds(5)

    func run() async throws {
        let deadline = ContinuousClock.now + listenTimeout
        while !listening(), ContinuousClock.now < deadline {
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(5)) } } catch { return }
        }
        var runtime = source.runtime
        await runtime.firstRound()
        lifecycle.markStarted()
        var running = Task { [monitor = runtime.monitor] in await monitor.run() }
        for await _ in reloads.cancelOnGracefulShutdown() {
            running.cancel()
            await running.value // the old runtime's checks end before it is released
            runtime = source.runtime
            running = Task { [monitor = runtime.monitor] in await monitor.run() }
        }
        running.cancel()
        await running.value
    }
}

/// Reads the current runtime's applications' health, then their slowest dependencies (for the
/// status page), every `apps.health_interval` (a reload may change it), after the first round
/// `MonitorService` runs. Cancelled at shutdown.
///
/// Each round is a burst of allocation, which `trimmer` gives back once the daemon is quiet.
struct AppHealthService: Service {
    let source: DaemonSource
    let trimmer: HeapTrimmer

    func run() async throws {
        while true {
            let interval = source.runtime.apps.configuration.healthInterval
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } } catch { return }
            // A round that asked no application allocated nothing worth trimming.
            let apps = source.runtime.apps
            if await apps.refreshHealth() > 0 {
                await apps.refreshDependencies()
                trimmer.burstEnded()
            }
        }
    }
}

/// Records every check's and application's state in the status page's history every 5 seconds,
/// until shutdown.
struct StatusHistoryService: Service {
    let source: DaemonSource
    let history: StatusHistory

    static let interval = Duration.seconds(5)

    func run() async throws {
        while true {
            history.record(Array(await source.healthReport().checks.values), at: WallClock.now())
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) } } catch { return }
        }
    }
}

/// SIGHUP reloads the configuration file, between `RELOADING=1` and `READY=1` to systemd. A reload
/// applies all of the new file or none of it: a bad file, or one whose `listen:` differs from the
/// bound listeners (a reload cannot rebind them), is rejected with the reason logged, and the old
/// configuration keeps running. The new checks run their first round before they are swapped in,
/// so `/health` never answers from a runtime without results.
struct ReloadService: Service {
    let path: String?
    let notifier: SystemdNotifier
    let source: DaemonSource
    let router: HealthRouter
    /// Whether the listeners came from systemd (socket activation): then `listen:` is not used.
    let socketActivated: Bool
    let group: any EventLoopGroup
    let connections: ConnectionPool
    let reloaded: AsyncStream<Void>.Continuation
    let outcomes: ReloadMetrics
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            notifier.reloading()
            defer { notifier.ready() }
            guard let path else {
                logger.notice("SIGHUP: running the embedded default configuration; nothing to reload")
                continue
            }
            do throws(ConfigurationError) {
                // Loading resolves listen hosts and reads the token file: off the task pool.
                let configuration = try await offThePool {
                    Result { () throws(ConfigurationError) in try ConfigurationLoader.load(path: path) }
                }.get()
                var server = configuration.serverConfiguration(
                    listeners: socketActivated ? router.configuration.listeners : configuration.listeners)
                // Not in the file: the connection limits the running server was started with.
                server.maxConnections = router.configuration.maxConnections
                server.reservedConnections = router.configuration.reservedConnections
                guard server.listeners == router.configuration.listeners else {
                    throw ConfigurationError(
                        file: path, line: 1, column: 1,
                        message: "listen: changed from \(router.configuration.listeners.map(\.description).joined(separator: ", ")) "
                            + "to \(server.listeners.map(\.description).joined(separator: ", ")); a reload cannot rebind "
                            + "the listeners: restart weave-healthd to apply it")
                }
                let runtime = await Runtime(configuration: configuration, group: group, connections: connections,
                                            ownSockets: server.listeners.compactMap(\.unixPath))
                await runtime.firstRound()
                router.reconfigure(server)
                source.replace(with: runtime)
                reloaded.yield()
                outcomes.record(success: true)
                logger.notice("Configuration reloaded",
                              metadata: WeaveEvent.configReloaded.metadata([
                                  "file": "\(path)", "checks": "\(configuration.checks.count)",
                                  "apps_directory": "\(configuration.apps.directory ?? "none")",
                                  "apps_targets": "\(configuration.apps.targets.map(\.name).joined(separator: ","))",
                              ]))
            } catch {
                outcomes.record(success: false)
                logger.error("Configuration rejected; the previous one keeps running: \(error)",
                             metadata: WeaveEvent.configRejected.metadata(
                                 ["file": "\(path)", "line": "\(error.line)", "column": "\(error.column)"]))
            }
        }
    }
}
