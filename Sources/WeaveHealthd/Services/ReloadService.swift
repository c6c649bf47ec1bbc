import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveSupport
import WeaveSystemd

/// SIGHUP reloads the configuration file, between `RELOADING=1` and `READY=1` to systemd. A reload
/// applies all of the new file or none of it: a bad file, or one whose `listen:` differs from the
/// bound listeners (a reload cannot rebind them) or whose `memory_pressure:` trigger differs from
/// the one armed at startup, is rejected with the reason logged, and the old
/// configuration keeps running. The new runtime goes to `MonitorService`, which swaps it in once its
/// checks have results, so `/health` never answers from a runtime without results. Each verdict is
/// also written for `weave-healthd --reload` (`ReloadVerdict`), so `systemctl reload` says what the
/// daemon did.
struct ReloadService: Service {
    let path: String?
    let notifier: SystemdNotifier
    let source: DaemonSource
    let router: HealthRouter
    /// The listeners the server bound (or was passed by systemd).
    let listeners: [Listener]
    /// Whether the listeners came from systemd (socket activation): then `listen:` is not used.
    let socketActivated: Bool
    let group: any EventLoopGroup
    let connections: ConnectionPool
    let blocking: BlockingCalls
    /// Told after each reload: a new runtime is a burst of allocation, whose memory goes back once reloads stop.
    let trimmer: HeapTrimmer
    let reloaded: AsyncStream<Runtime>.Continuation
    let outcomes: ReloadMetrics
    /// Where each verdict goes for `--reload`; nil for a daemon started without `$RUNTIME_DIRECTORY`.
    let verdicts: StateFile? = ReloadVerdict.file()
    let logger: Logger

    /// How long a reload waits for the file (and the files it names) to be read.
    static let loadDeadline: Duration = .seconds(30)

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        var answered: UInt64 = 0
        for await _ in signals.cancelOnGracefulShutdown() {
            notifier.reloading()
            answered += 1
            let (accepted, message) = await reload()
            if let verdicts {
                let verdict = ReloadVerdict(pid: getpid(), count: answered, accepted: accepted, message: message)
                _ = await verdicts.save(verdict.text, with: blocking)
            }
            notifier.ready()
        }
    }

    /// Loads the file and swaps the new runtime in, or rejects it; the verdict and what to tell `--reload`.
    private func reload() async -> (accepted: Bool, message: String) {
        guard let path else {
            logger.notice("SIGHUP: running the embedded default configuration; nothing to reload")
            return (true, "weave-healthd runs its embedded default configuration: nothing to reload")
        }
        do throws(ConfigurationError) {
            // Loading resolves listen hosts and reads the token and CA files: a blocking call.
            let loaded = try? await blocking.run("reload", lane: .files, deadline: Self.loadDeadline) {
                Result { () throws(ConfigurationError) in try ConfigurationLoader.load(path: path) }
            }
            guard let loaded else {
                throw ConfigurationError(file: path, line: 1, column: 1,
                                         message: "not loaded within \(Self.loadDeadline.totalSeconds) s, or an earlier load has not returned")
            }
            let configuration = try loaded.get()
            guard socketActivated || configuration.listeners == listeners else {
                throw ConfigurationError(
                    file: path, line: 1, column: 1,
                    message: "listen: changed from \(listeners.map(\.description).joined(separator: ", ")) "
                        + "to \(configuration.listeners.map(\.description).joined(separator: ", ")); a reload cannot rebind "
                        + "the listeners: restart weave-healthd to apply it")
            }
            // The kernel's trigger is armed once, at startup (`Daemon.run`): refused, not ignored.
            let running = source.runtime.configuration.memoryPressureTrigger
            guard configuration.memoryPressureTrigger == running else {
                throw ConfigurationError(
                    file: path, line: 1, column: 1,
                    message: "memory_pressure: trigger changed from '\(running)' to '\(configuration.memoryPressureTrigger)'; "
                        + "a reload cannot re-arm the kernel's trigger: restart weave-healthd to apply it")
            }
            let runtime = await Runtime(configuration: configuration, group: group, connections: connections, blocking: blocking,
                                        owners: source.runtime.apps.owners, events: source.runtime.apps.events,
                                        lifecycle: source.runtime.apps.lifecycle,
                                        ownSockets: listeners.compactMap(\.unixPath), trimmer: trimmer)
            router.reconfigure(configuration.policy(listeners: listeners))
            runtime.apps.events.limit = configuration.logRateLimit
            reloaded.yield(runtime)
            trimmer.burstEnded()
            outcomes.record(success: true)
            logger.notice("Configuration reloaded",
                          metadata: WeaveEvent.configReloaded.metadata([
                              "file": "\(path)", "checks": "\(configuration.checks.count)",
                              "apps_directory": "\(configuration.apps.directory ?? "none")",
                              "apps_targets": "\(configuration.apps.targets.map(\.name).joined(separator: ","))",
                          ]))
            return (true, "\(path): reloaded, \(configuration.checks.count) checks")
        } catch {
            outcomes.record(success: false)
            logger.error("Configuration rejected; the previous one keeps running: \(error)",
                         metadata: WeaveEvent.configRejected.metadata(
                             ["file": "\(path)", "line": "\(error.line)", "column": "\(error.column)"]))
            return (false, "\(error)\nweave-healthd rejected it; the previous configuration keeps running")
        }
    }
}
