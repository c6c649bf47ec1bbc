import ServiceLifecycle
import WeaveHealth
import WeaveHealthRoutes
import WeaveSupport

/// Runs the current runtime's health checks, each on its own clock, and reads its applications'
/// health once at the start; readiness may pass once both have results (or `firstResultsWithin`
/// has passed: a check stalled for its whole timeout holds nothing back). A reload hands over a new
/// runtime: its checks start at once, and it replaces the old one (whose checks are then cancelled)
/// when it has results of its own, so `/health` never answers from a runtime without results.
/// Cancelled at shutdown.
///
/// The first checks wait until `listening` (at most `listenTimeout`): a check of the daemon's own
/// port, as in the embedded configuration, would otherwise race the bind, fail, and hold readiness
/// down until its next round.
struct MonitorService: Service {
    let source: DaemonSource
    let lifecycle: ServerLifecycle
    /// The runtimes of accepted reloads, in order.
    let reloads: AsyncStream<Runtime>
    let listening: @Sendable () -> Bool
    var listenTimeout: Duration = .seconds(5)
    /// How long a runtime's first results are awaited before it serves anyway.
    var firstResultsWithin: Duration = Defaults.checkTimeout

    func run() async throws {
        let deadline = ContinuousClock.now + listenTimeout
        while !listening(), ContinuousClock.now < deadline {
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(5)) } } catch { return }
        }
        // The runtime serving and the one a reload started. A reload superseded before it has results
        // is cancelled at once: only these two ever run. Set under the lock the starts are made in,
        // so a runtime ready at once finds itself pending.
        let handover = Locked<(serving: Task<Void, Never>?, pending: (generation: Int, task: Task<Void, Never>)?)>((nil, nil))
        handover.withLock { $0.serving = start(source.runtime) { lifecycle.markStarted() } }
        var generation = 0
        for await runtime in reloads.cancelOnGracefulShutdown() {
            generation += 1
            let current = generation
            let superseded = handover.withLock { state -> Task<Void, Never>? in
                defer {
                    state.pending = (current, start(runtime) { [source] in
                        let replaced = handover.withLock { state -> Task<Void, Never>?? in
                            guard let pending = state.pending, pending.generation == current else { return .none }
                            source.replace(with: runtime)
                            defer { state = (pending.task, nil) }
                            return .some(state.serving)
                        }
                        if case .some(let old) = replaced { old?.cancel() } // the old runtime's checks end
                    })
                }
                return state.pending?.task
            }
            superseded?.cancel()
        }
        let running = handover.withLock { [$0.serving, $0.pending?.task].compactMap { $0 } }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }

    /// Starts `runtime`'s checks and its applications' first health read; `ready` once both have results.
    private func start(_ runtime: Runtime, ready: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        let waiting = Locked(2)
        let done: @Sendable () -> Void = {
            if waiting.withLock({ $0 -= 1; return $0 == 0 }) { ready() }
        }
        return Task { [firstResultsWithin] in
            await withDiscardingTaskGroup { group in
                group.addTask { await runtime.monitor.run(firstResultsWithin: firstResultsWithin, firstResults: done) }
                group.addTask {
                    await runtime.apps.refreshHealth()
                    done()
                }
            }
        }
    }
}
