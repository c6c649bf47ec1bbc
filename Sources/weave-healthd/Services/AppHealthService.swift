import ServiceLifecycle

/// Reads the current runtime's applications' health, then their slowest dependencies (for the
/// status page) and their new events (for the journal), every `apps.health_interval` (a reload may change it), after the first round
/// `MonitorService` runs, and at once when a scrape showed a check in a state `/health` does not
/// have yet. Cancelled at shutdown.
///
/// Each round is a burst of allocation, which `trimmer` gives back once the daemon is quiet.
struct AppHealthService: Service {
    let source: DaemonSource
    let trimmer: HeapTrimmer

    /// How soon a scrape's request for an early round is seen.
    static let wakeCheck = Duration.milliseconds(20)

    func run() async throws {
        while true {
            let interval = source.runtime.apps.configuration.healthInterval
            let due = ContinuousClock.now + interval
            do {
                try await cancelWhenGracefulShutdown {
                    while ContinuousClock.now < due, !source.runtime.apps.takeHealthStale() {
                        try await Task.sleep(for: min(Self.wakeCheck, due - ContinuousClock.now))
                    }
                }
            } catch { return }
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
