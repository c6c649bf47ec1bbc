import WeaveDI
import WeaveHealthRoutes
import WeaveObservability
import WeaveSupport

/// `/why?app=APP&dependency=NAME`, which `weave-health why APP/NAME` prints: why an application's
/// dependency was slow, as small trees of factory runs with their total and self times: the last
/// slow resolution whose chain runs through it (from the application's events) and its startup
/// chain (from its last `/dependencies`). Text, for a terminal; names arrive `logSafe`. A detail:
/// shown only to clients that may see details, as `/events`.
struct DependencyWhy: Sendable {
    let source: DaemonSource
    let chains: AppSlowChains

    var route: HealthRoute {
        HealthRoute(components: ["why"], formats: ["text/plain"], responder: .rendered { request, router in
            guard router.showsDetails(request) else {
                return router.text(403, "why a dependency was slow is a detail, not shown to this client\n")
            }
            guard let app = request.values("app").last, !app.isEmpty,
                  let dependency = request.values("dependency").last, !dependency.isEmpty else {
                return router.text(400, "why needs ?app=APP&dependency=NAME\n")
            }
            guard let view = source.runtime.apps.views().first(where: { $0.name == app }) else {
                return router.text(404, "no application \(app.logSafe) is known here\n")
            }
            let text = Self.render(app: app, dependency: dependency, slow: chains.last(app, through: dependency),
                                   startup: view.dependencies?.summary.startup)
            return router.text(text == nil ? 404 : 200, text ?? "\(app.logSafe)/\(dependency.logSafe): no slow resolution "
                + "and no startup run of it are known (startup lists the \(DependencySummary.defaultStartupRuns) longest runs)\n")
        })
    }

    /// The trees, or nil when neither is known.
    static func render(app: String, dependency: String, slow: AppSlowChains.Slow?, startup: StartupTree?) -> String? {
        var text = ""
        if let slow {
            text += "Last slow resolution, \(Timestamp.readable(slow.time)): \(slow.dependency)"
            if let duration = slow.durationMicros { text += " took \(micros(duration))" }
            if let threshold = slow.thresholdMicros { text += " (threshold \(micros(threshold)))" }
            text += "\n"
            for (depth, name) in slow.chain.enumerated() {
                let times = slow.times.isEmpty ? "" : "  \(micros(slow.times[depth].total)), self \(micros(slow.times[depth].own))"
                text += line(depth, name, times + (name == slow.slowest ? "  ← slowest" : ""))
            }
        }
        let chain = startup?.chain(to: dependency) ?? []
        if !chain.isEmpty {
            let slowest = chain.max { $0.selfTime < $1.selfTime }?.service
            text += "Startup, first resolutions:\n"
            for (depth, run) in chain.enumerated() {
                let times = "  \(seconds(run.total)), self \(seconds(run.selfTime)), at +\(seconds(run.start))"
                text += line(depth, run.service, times + (chain.count > 1 && run.service == slowest ? "  ← slowest" : ""))
            }
        }
        return text.isEmpty ? nil : "\(app.logSafe)/\(dependency.logSafe)\n" + text
    }

    /// One run, indented under its parent (at most 16 levels: a chain through a cycle can be deep).
    private static func line(_ depth: Int, _ name: String, _ rest: String) -> String {
        let indent = min(depth, 16)
        return "  " + String(repeating: "   ", count: max(0, indent - 1)) + (indent > 0 ? "└─ " : "") + name + rest + "\n"
    }

    private static func micros(_ value: UInt64) -> String { StatusDocument.seconds(Double(value) / 1e6) }
    private static func seconds(_ value: Duration) -> String { StatusDocument.seconds(value.totalSeconds) }
}
