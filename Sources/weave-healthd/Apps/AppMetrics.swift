import WeavePrometheus

/// The applications' families, scraped at each `/metrics`, each series labelled with its `app`, and
/// the home of `weave_app_up` and `weave_app_scrape_duration_seconds`. An application that is down
/// has no series but those two. Those two come first, so an application's family of the same name
/// never gives them its help or type (or, of another type, leaves them out of the exposition).
struct AppMetrics: MetricCollector {
    /// The current configuration's applications (a reload swaps them).
    let fleet: @Sendable () -> AppFleet
    /// Told after each scrape of applications, whose megabytes the heap keeps until scrapes stop.
    var trimmer: HeapTrimmer? = nil
    /// It waits on the applications: `/metrics` asks them first and collects the daemon's own families meanwhile.
    var waitsOnOthers: Bool { true }

    func collect() async -> [MetricFamily] {
        let scrapes = await fleet().scrape()
        defer { if !scrapes.isEmpty { trimmer?.burstEnded() } }
        let own: [MetricFamily] = [
            .gauge("weave_app_up", "Whether the application's endpoint answered this scrape with a valid exposition (1) or not (0).",
                   scrapes.map { ([("app", $0.target.name)], $0.families == nil ? 0 : 1) }),
            .gauge("weave_app_scrape_duration_seconds", "How long reading the application's /metrics took in this scrape.",
                   unit: "seconds", scrapes.map { ([("app", $0.target.name)], $0.duration.totalSeconds) }),
        ]
        return own + scrapes.flatMap { $0.families ?? [] }
    }
}
