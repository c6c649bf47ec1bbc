import ServiceLifecycle
import WeaveSupport

/// Records every check's and application's state in the status page's history every 5 seconds,
/// until shutdown.
struct StatusHistoryService: Service {
    let source: DaemonSource
    let history: StatusHistory

    static let interval = Duration.seconds(5)

    func run() async throws {
        while true {
            history.record(Array(source.healthReport().checks.values), at: WallClock.now())
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) } } catch { return }
        }
    }
}
