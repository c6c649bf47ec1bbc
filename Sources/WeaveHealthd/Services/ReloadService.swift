import Logging
import ServiceLifecycle
import UnixSignals
import WeaveHealthRoutes
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
    /// The listeners the server bound, or was passed by systemd (then `listen:` is not used).
    let listening: DaemonListeners
    /// What each new runtime shares with the old; its trimmer is told after each reload: a new
    /// runtime is a burst of allocation, whose memory goes back once reloads stop.
    let shared: DaemonShared
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
                _ = await verdicts.save(verdict.text, with: shared.blocking)
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
            let loaded = try? await shared.blocking.run("reload", lane: .files, deadline: Self.loadDeadline) {
                Result { () throws(ConfigurationError) in try ConfigurationLoader.load(path: path) }
            }
            guard let loaded else {
                throw ConfigurationError(file: path, line: 1, column: 1,
                                         message: "not loaded within \(Self.loadDeadline.totalSeconds) s, or an earlier load has not returned")
            }
            let configuration = try loaded.get()
            if let refusal = source.runtime.refusal(of: configuration, listeners: listening.listeners,
                                                    socketActivated: listening.socketActivated) {
                // At the changed key's value (the file's start when the key was removed).
                let (line, column) = configuration.positions[refusal.key] ?? (1, 1)
                throw ConfigurationError(file: path, line: line, column: column, message: refusal.message)
            }
            // Its policy applies when it is swapped in (`MonitorService`), with the rest of it.
            let runtime = await Runtime(configuration: configuration, shared: shared) { [router, listeners = listening.listeners] configuration in
                router.reconfigure(configuration.policy(listeners: listeners))
            }
            reloaded.yield(runtime)
            shared.trimmer?.burstEnded()
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
