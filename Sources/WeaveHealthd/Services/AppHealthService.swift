import ServiceLifecycle
import WeaveSupport

/// Reads the current runtime's applications (a reload may change them): each application that can
/// be watched through a request it holds until it has news (`AppWatches`, `watch`), the others every
/// `apps.health_interval` on two clocks of their own, so that neither waits for the other: their
/// health, then their slowest dependencies (for the status page); and their new events (for the
/// journal). A polled application a scrape showed with a check in a state its `/health` does not
/// have yet is read again at once, alone (`AppFleet.takeHealthStale`). Cancelled at shutdown. Each
/// round that asked applications tells the heap trimmer (`AppFleet.noteBurst`).
struct AppHealthService: Service {
    let source: DaemonSource

    /// How long an application holds a watch request without news; its `/health` and
    /// `/dependencies` are read at least this often.
    static let watchWait = Duration.seconds(30)
    /// How long after its last request a watch asks again, at least: an application with a flood of
    /// events is read in pages of up to 256 at most this often.
    static let watchSpacing = Duration.milliseconds(100)
    /// How long after a request that read its `/health` a watch asks again, at least: an application
    /// with a transition at every answer is read no more often than a polled one (at the default
    /// `health_interval`).
    static let healthReadSpacing = Duration.seconds(1)
    /// How long an application that cannot be watched is polled before its watch is tried again.
    static let notWatchableRetry = Duration.seconds(60)

    func run() async throws {
        let watches = source.runtime.apps.watches
        defer { watches.stopAll() }
        await withDiscardingTaskGroup { group in
            group.addTask { await healthRounds() }
            group.addTask {
                while true {
                    let due = ContinuousClock.now + source.runtime.apps.configuration.healthInterval
                    guard (try? await cancelWhenGracefulShutdown { try await Task.sleep(until: due, clock: .continuous) }) != nil else { return }
                    let apps = source.runtime.apps
                    _ = await apps.refreshEvents(except: apps.watches.watched())
                }
            }
        }
    }

    /// Every health interval, the watches of the applications that answered their last reads (and an
    /// end to those of the others), then the health and dependencies of every application not watched;
    /// meanwhile, at once, the health of those a scrape asked for (`EarlyHealthReads.asked`). Until
    /// graceful shutdown.
    private func healthRounds() async {
        while true {
            let due = ContinuousClock.now + source.runtime.apps.configuration.healthInterval
            startWatches()
            var early: Set<String> = []
            repeat {
                let wait = { @Sendable () async throws -> Set<String> in
                    let reads = source.runtime.apps.earlyHealthReads
                    _ = await ChangeSignal.wait(for: due - ContinuousClock.now, on: [reads.asked]) { reads.isPending }
                    try Task.checkCancellation()
                    return source.runtime.apps.takeHealthStale()
                }
                guard let asked = try? await cancelWhenGracefulShutdown(wait) else { return }
                early = asked
                if !early.isEmpty { await source.runtime.apps.refreshHealth(only: early) }
            } while !early.isEmpty
            let apps = source.runtime.apps
            let watched = apps.watches.watched()
            guard await apps.refreshHealth(except: watched) > 0 else { continue }
            startWatches()
            await apps.refreshDependencies(except: watched)
        }
    }

    /// Starts a watch for each application of the current runtime that answered its reads, and ends
    /// those of the others (none with `apps: watch: false`).
    private func startWatches() {
        let fleet = source.runtime.apps
        fleet.watches.update(fleet.configuration.watch ? fleet.answering().map(\.name) : []) { name, id in Task { await watch(name, id: id) } }
    }

    /// Watches the application `name` until it stops answering its reads (`AppWatches.update`
    /// cancels this), a watch request fails, or the daemon stops: its first request is answered at
    /// once (whether it can be watched, and its health), then each is held until it has news or
    /// `watchWait` ends. Once it ends, the application is polled (its rounds find whether it is down,
    /// and tell it once), and a round that finds it answering starts another watch.
    private func watch(_ name: String, id: Int) async {
        let connection = ConnectionPool(capacity: 1)
        defer {
            connection.closeAll()
            source.runtime.apps.watches.ended(name, id: id)
        }
        var healthReadAt: ContinuousClock.Instant?
        var wait = Duration.zero
        while !Task.isCancelled {
            let apps = source.runtime.apps
            guard let target = apps.target(named: name) else { return }
            let started = ContinuousClock.now
            let stale = healthReadAt.map { started - $0 >= Self.watchWait } ?? true
            let answer = await apps.watchEvents(target, wait: wait, readHealth: stale, connection: connection)
            guard !Task.isCancelled else { return }
            let pause: Duration
            switch answer {
            case .answered(let healthRead, let news):
                apps.watches.setWatching(name, true)
                if healthRead { healthReadAt = started }
                // Answered early without news: it is shutting down (it answers every watch at once
                // then); asked again after `health_interval`, not in a loop while it drains.
                let elapsed = ContinuousClock.now - started
                let early = !news && wait > .zero && elapsed < wait / 2
                pause = early ? apps.configuration.healthInterval - elapsed
                    : (healthRead ? Self.healthReadSpacing : Self.watchSpacing) - elapsed
                wait = Self.watchWait
            case .notWatchable:
                apps.watches.setWatching(name, false)
                (healthReadAt, wait, pause) = (nil, .zero, Self.notWatchableRetry)
            case .failed:
                // Polled from now on: its next round finds whether it is down, as it would have.
                return
            }
            if pause > .zero { try? await Task.sleep(for: pause) }
        }
    }
}
