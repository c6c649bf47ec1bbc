import ServiceLifecycle

/// Reads the current runtime's applications every `apps.health_interval` (a reload may change it),
/// on two clocks of their own, so that neither waits for the other: their health, then their
/// slowest dependencies (for the status page), at once when a scrape showed a check in a state
/// `/health` does not have yet; and their new events (for the journal). Cancelled at shutdown.
/// Each round that asked applications tells the heap trimmer (`AppFleet.noteBurst`).
struct AppHealthService: Service {
    let source: DaemonSource

    /// How soon a scrape's request for an early round is seen.
    static let wakeCheck = Duration.milliseconds(20)

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                await every(early: { source.runtime.apps.takeHealthStale() }) {
                    let apps = source.runtime.apps
                    guard await apps.refreshHealth() > 0 else { return }
                    await apps.refreshDependencies()
                }
            }
            group.addTask {
                await every { _ = await source.runtime.apps.refreshEvents() }
            }
        }
    }

    /// Runs `round` every health interval, or sooner when `early` says so (looked at every
    /// `wakeCheck`), until graceful shutdown.
    private func every(early: (@Sendable () -> Bool)? = nil, _ round: @escaping @Sendable () async -> Void) async {
        while true {
            let due = ContinuousClock.now + source.runtime.apps.configuration.healthInterval
            do {
                try await cancelWhenGracefulShutdown {
                    while ContinuousClock.now < due, early?() != true {
                        try await Task.sleep(for: early == nil ? due - ContinuousClock.now : min(Self.wakeCheck, due - ContinuousClock.now))
                    }
                }
            } catch { return }
            await round()
        }
    }
}
