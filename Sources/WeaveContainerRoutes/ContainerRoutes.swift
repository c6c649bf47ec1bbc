// The container's own routes for a `HealthRouter`, served by an application's endpoint and by the daemon.
public import WeaveDI
public import WeaveHealthRoutes
public import WeaveObservability
import WeavePrometheus
import WeaveSupport

extension HealthRoute {
    /// `/dependencies`: the slowest dependencies of a container (`?limit=N`, 10 by default, at most
    /// 100) and the longest runs of its startup tree (`?startup=N`, 20 by default, at most 100), as
    /// `DependencySummary` JSON, with the router's version and this process's start.
    public static func dependencies(_ statistics: @escaping @Sendable () -> ContainerStatistics,
                                    startup: @escaping @Sendable () -> StartupTree? = { nil }) -> HealthRoute {
        HealthRoute(components: ["dependencies"], formats: ["application/json"], responder: .rendered { request, router in
            let asked = request.values("limit").last.flatMap { Int($0) } ?? DependencySummary.defaultLimit
            let runs = request.values("startup").last.flatMap { Int($0) } ?? DependencySummary.defaultStartupRuns
            let summary = DependencySummary(version: router.identity.version, startedAt: ProcessMetrics.startTime(),
                                            statistics: statistics(), limit: asked, startup: startup(), startupRuns: runs)
            return HealthResponse(status: 200, contentType: "application/json", text: summary.json)
        })
    }

    /// `/events`: the container's events numbered after `?after=N` (0 by default), at most
    /// `?limit=N` (`ContainerEventLog.maxPerRequest`), as JSON; to clients that may see details only,
    /// since errors and reasons are in them. With `?wait=D` (`WatchWait`) it is held until the log
    /// has an event after N, or is not the run `?started=S` names, for at most D, or until graceful
    /// shutdown begins; `X-Weave-Index` gives the newest number either way.
    public static func events(_ log: ContainerEventLog) -> HealthRoute {
        HealthRoute(components: ["events"], formats: ["application/json"], responder: .rendered { request, router in
            guard router.showsDetails(request) else { return router.text(403, "the events are details, not shown to this client\n") }
            let after = request.values("after").last.flatMap { UInt64($0) } ?? 0
            let limit = min(request.values("limit").last.flatMap { Int($0) } ?? ContainerEventLog.maxPerRequest,
                            ContainerEventLog.maxPerRequest)
            switch WatchWait.of(request, router: router) {
            case .failure(let refusal):
                return refusal.response
            case .success(let wait?):
                let run = request.values("started").last.flatMap { Double($0) }
                _ = await ChangeSignal.wait(for: wait, on: [log.appended, router.lifecycle.stopSignal]) { [lifecycle = router.lifecycle] in
                    // A number past the newest is another run's: answered at once, as a news.
                    log.newest != after || run.map { $0 != log.started } ?? false || lifecycle.isStopping
                }
            case .success(nil):
                break
            }
            var response = HealthResponse(status: 200, contentType: "application/json", text: log.json(after: after, limit: limit))
            response.headers.append((WatchWait.indexHeader, "\(log.newest)"))
            return response
        })
    }
}
