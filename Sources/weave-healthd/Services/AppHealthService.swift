import ServiceLifecycle

/// Reads the current runtime's applications' health, then their slowest dependencies (for the
/// status page) and their new events (for the journal), every `apps.health_interval` (a reload may change it), after the first round
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
                await apps.refreshEvents()
                trimmer.burstEnded()
            }
        }
    }
}
