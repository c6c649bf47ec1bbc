import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import WeaveDI
import WeaveHealthServer
import WeaveSystemd

/// Runs the current runtime's health checks: one round at startup (then readiness may pass), then
/// on their intervals; a reload restarts it on the new runtime. Cancelled at shutdown.
struct MonitorService: Service {
    let source: DaemonSource
    let lifecycle: ServerLifecycle
    let reloads: AsyncStream<Void>

    func run() async throws {
        var runtime = source.runtime
        _ = await runtime.monitor.checkAll()
        lifecycle.markStarted()
        var running = Task { [monitor = runtime.monitor] in await monitor.run() }
        for await _ in reloads.cancelOnGracefulShutdown() {
            running.cancel()
            runtime = source.runtime
            _ = await runtime.monitor.checkAll()
            running = Task { [monitor = runtime.monitor] in await monitor.run() }
        }
        running.cancel()
    }
}

/// SIGHUP reloads the configuration file, between `RELOADING=1` and `READY=1` to systemd. A bad
/// file is rejected with its error logged, and the old configuration keeps running.
struct ReloadService: Service {
    let path: String?
    let notifier: SystemdNotifier
    let source: DaemonSource
    let group: any EventLoopGroup
    let reloaded: AsyncStream<Void>.Continuation
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
            do {
                let configuration = try ConfigurationLoader.load(path: path)
                configuration.applyContainerSettings()
                source.replace(with: await Runtime(configuration: configuration, group: group))
                reloaded.yield()
                logger.notice("Configuration reloaded",
                              metadata: WeaveEvent.configReloaded.metadata(["file": "\(path)", "checks": "\(configuration.checks.count)"]))
            } catch {
                logger.error("Configuration rejected; the previous one keeps running: \(error)",
                             metadata: WeaveEvent.configRejected.metadata(
                                 ["file": "\(path)", "line": "\(error.line)", "column": "\(error.column)"]))
            }
        }
    }
}
