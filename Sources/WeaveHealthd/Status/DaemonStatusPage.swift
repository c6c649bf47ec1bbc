import WeaveHealth
import WeaveHealthRoutes
import WeavePrometheus
import WeaveSupport

/// The host's status page at `/`: the verdict; each application, up or down with its reason,
/// version and uptime, its checks and its slowest dependencies; the daemon's own checks; the last
/// hour of each as a strip of states; the recent transitions. Plain HTML with inline CSS, no
/// script: it reads the same in a terminal browser. `?app=NAME` shows one application.
///
/// Reasons are shown only to clients that may see them (`details:` and the token, as `/health`),
/// and the page is bounded (`maxBytes`): applications past it are named, not shown.
struct DaemonStatusPage: Sendable {
    let source: DaemonSource
    let history: StatusHistory
    let identity: ServiceIdentity

    /// The page stops adding applications past this size, and says how many it left out.
    static let maxBytes = 4 << 20

    /// The page as the router's `/`, in place of its small default page.
    var route: HealthRoute {
        .page { request, router in render(request, details: router.showsDetails(request)) }
    }

    /// The page for `request`; `details` says whether this client may see reasons.
    func render(_ request: HealthRequest, details: Bool) -> HealthResponse {
        let report = source.healthReport()
        let now = WallClock.now()
        let page = StatusDocument(report: report, apps: source.runtime.apps.views(), history: history.snapshot(at: now), now: now,
                                  details: details, filter: request.values("app").last.flatMap { $0.isEmpty ? nil : $0 })
        return HealthResponse(status: 200, contentType: HealthRoute.html, text: page.render(identity))
    }
}
