import ServiceLifecycle

/// Reads the current runtime's applications every `apps.health_interval` (a reload may change it),
/// on two clocks of their own, so that neither waits for the other: their health, then their
/// slowest dependencies (for the status page), at once when a scrape showed a check in a state
/// `/health` does not have yet; and their new events (for the journal). Cancelled at shutdown.
///
/// Each round is a burst of allocation, which `trimmer` gives back once the daemon is quiet.
struct AppHealthService: Service {
    let source: DaemonSource
    let trimmer: HeapTrimmer

    /// How soon a scrape's request for an early round is seen.
    static let wakeCheck = Duration.milliseconds(20)

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                await every(early: { source.runtime.apps.takeHealthStale() }) {
                    let apps = source.runtime.apps
                    // A round that asked no application allocated nothing worth trimming.
                    guard await apps.refreshHealth() > 0 else { return false }
                    await apps.refreshDependencies()
                    return true
                }
            }
            group.addTask {
                await every { await source.runtime.apps.refreshEvents() > 0 }
            }
        }
    }

    /// Runs `round` every health interval, or sooner when `early` says so (looked at every
    /// `wakeCheck`), until graceful shutdown; trims the heap after a round that did something.
    private func every(early: (@Sendable () -> Bool)? = nil, _ round: @escaping @Sendable () async -> Bool) async {
        while true {
            let due = ContinuousClock.now + source.runtime.apps.configuration.healthInterval
            do {
                try await cancelWhenGracefulShutdown {
                    while ContinuousClock.now < due, early?() != true {
                        try await Task.sleep(for: early == nil ? due - ContinuousClock.now : min(Self.wakeCheck, due - ContinuousClock.now))
                    }
                }
            } catch { return }
            if await round() { trimmer.burstEnded() }
        }
    }
}
