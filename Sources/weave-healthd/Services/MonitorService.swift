import ServiceLifecycle
import WeaveHealthServer

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
