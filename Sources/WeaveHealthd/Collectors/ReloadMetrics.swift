import WeavePrometheus
import WeaveSupport

/// `weave_config_last_reload_successful` and `weave_config_last_reload_success_timestamp_seconds`,
/// as Prometheus exports its own: loading the file at startup is the first successful load.
final class ReloadMetrics: MetricCollector {
    var name: String { "reload" }
    private let state = Locked<(successful: Bool, successAt: Double)>((true, WallClock.now()))

    /// Records the outcome of a reload of the configuration file.
    func record(success: Bool) {
        let now = WallClock.now()
        state.withLock { $0 = (success, success ? now : $0.successAt) }
    }

    func collect() async -> [MetricFamily] {
        let state = self.state.withLock { $0 }
        return [
            .gauge("weave_config_last_reload_successful",
                   "Whether the last load of the configuration file succeeded (1) or was rejected (0).",
                   [([], state.successful ? 1 : 0)]),
            .gauge("weave_config_last_reload_success_timestamp_seconds",
                   "When the configuration file was last loaded successfully, in seconds since the Unix epoch.",
                   unit: "seconds", [([], state.successAt)]),
        ]
    }
}
