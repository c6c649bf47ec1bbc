import ServiceLifecycle

/// Reads the current runtime's applications every `apps.health_interval` (a reload may change it),
/// on two clocks of their own, so that neither waits for the other: their health, then their
/// slowest dependencies (for the status page); and their new events (for the journal). An
/// application a scrape showed with a check in a state its `/health` does not have yet is read
/// again at once, alone (`AppFleet.takeHealthStale`). Cancelled at shutdown. Each round that asked
/// applications tells the heap trimmer (`AppFleet.noteBurst`).
struct AppHealthService: Service {
    let source: DaemonSource

    /// How soon a scrape's request for an early read is seen.
    static let wakeCheck = Duration.milliseconds(20)

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await healthRounds() }
            group.addTask {
                while true {
                    let due = ContinuousClock.now + source.runtime.apps.configuration.healthInterval
                    guard (try? await cancelWhenGracefulShutdown { try await Task.sleep(until: due, clock: .continuous) }) != nil else { return }
                    _ = await source.runtime.apps.refreshEvents()
                }
            }
        }
    }

    /// Every health interval, every application's health and dependencies; meanwhile, at once, the
    /// health of those a scrape asked for (looked at every `wakeCheck`). Until graceful shutdown.
    private func healthRounds() async {
        while true {
            let due = ContinuousClock.now + source.runtime.apps.configuration.healthInterval
            var early: Set<String> = []
            repeat {
                let wait = { @Sendable () async throws -> Set<String> in
                    while ContinuousClock.now < due {
                        let asked = source.runtime.apps.takeHealthStale()
                        if !asked.isEmpty { return asked }
                        try await Task.sleep(for: min(Self.wakeCheck, due - ContinuousClock.now))
                    }
                    return []
                }
                guard let asked = try? await cancelWhenGracefulShutdown(wait) else { return }
                early = asked
                if !early.isEmpty { await source.runtime.apps.refreshHealth(only: early) }
            } while !early.isEmpty
            let apps = source.runtime.apps
            guard await apps.refreshHealth() > 0 else { continue }
            await apps.refreshDependencies()
        }
    }
}
