import ServiceLifecycle
import WeaveHealth
import WeaveObservability
import WeaveSupport

/// Records every check's and application's state, and which applications run since when, in the
/// status page's history every 5 seconds, until shutdown.
struct StatusHistoryService: Service {
    let source: DaemonSource
    let history: StatusHistory

    static let interval = Duration.seconds(5)

    func run() async throws {
        while true {
            // Present: a target (its socket is there, up or down), not merely known to the current
            // runtime, which a reload replaces with one that has asked nobody yet.
            let fleet = source.runtime.apps
            let started = Dictionary(fleet.views().map { ($0.name, $0.dependencies?.summary.startedAt) }) { $1 }
            let apps = fleet.targets().map { (name: $0.name, started: started[$0.name] ?? nil) }
            history.record(Array(source.healthReport().checks.values), apps: apps, at: WallClock.now())
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) } } catch { return }
        }
    }
}
