import WeaveDI
import WeaveHealthRoutes
import WeaveObservability
import WeaveSupport

/// `/why?app=APP&dependency=NAME`, which `weave-health why APP/NAME` prints: why an application's
/// dependency was slow, as small trees of factory runs with their total and self times: the last
/// slow resolution whose chain runs through it (from the application's events: down the longest
/// nested runs) and its startup (from its last `/dependencies`: the chain to it, and the runs made
/// in it). Each run's total is its self time, the runs shown under it, and "other nested resolves"
/// (runs not shown or too short to be kept, and the container's own work resolving them), so the
/// times add up. One mark in both trees: "← slowest", the
/// run shown with the most self time. Text, for a terminal; names arrive `logSafe`. A detail: shown
/// only to clients that may see details, as `/events`.
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
            let chain = slow.chain
            if slow.times.isEmpty {
                for (depth, name) in chain.enumerated() {
                    text += line(depth, name, chain.count > 1 && name == slow.slowest ? "  ← slowest" : "")
                }
            } else {
                let runs = zip(chain, slow.times).enumerated().map { index, run in
                    Shown(name: run.0, depth: index, total: Duration.microseconds(run.1.total), selfTime: .microseconds(run.1.own),
                          nested: index + 1 < chain.count ? .microseconds(slow.times[index + 1].total) : .zero, at: nil)
                }
                text += tree(runs)
            }
        }
        if let startup, let shown = startupRuns(startup, to: dependency) {
            text += "Startup, first resolutions:\n" + tree(shown)
        }
        return text.isEmpty ? nil : "\(app.logSafe)/\(dependency.logSafe)\n" + text
    }

    /// A run as shown: its depth in the tree, its times, and the totals of the runs shown under it.
    struct Shown {
        let name: String
        let depth: Int
        let total: Duration
        let selfTime: Duration
        let nested: Duration
        /// Its start, for a startup run.
        let at: Duration?
    }

    /// The startup runs to show for `dependency`: the chain from the outermost run down to it, then
    /// every listed run made in it, depth first in start order; nil when it made no run listed.
    static func startupRuns(_ startup: StartupTree, to dependency: String) -> [Shown]? {
        let chain = startup.chain(to: dependency)
        guard let target = chain.last else { return nil }
        let children = Dictionary(grouping: startup.runs.filter { $0.parent != nil }) { $0.parent! }
        var shown: [Shown] = []
        for (depth, run) in chain.dropLast().enumerated() {
            shown.append(Shown(name: run.service, depth: depth, total: run.total, selfTime: run.selfTime,
                               nested: chain[depth + 1].total, at: run.start))
        }
        // Below it: bounded by the runs listed (a name seen twice is a loop in what was read).
        var seen: Set<String> = Set(chain.map(\.service))
        func descend(_ run: StartupTree.Run, _ depth: Int) {
            let made = (children[run.service] ?? []).filter { seen.insert($0.service).inserted }
            shown.append(Shown(name: run.service, depth: depth, total: run.total, selfTime: run.selfTime,
                               nested: made.reduce(.zero) { $0 + $1.total }, at: run.start))
            for child in made { descend(child, depth + 1) }
        }
        descend(target, chain.count - 1)
        return shown
    }

    /// `runs` as an indented tree: each with its times, "other nested resolves" where its total holds
    /// more than its self time and the runs shown under it, and the mark on the most self time.
    private static func tree(_ runs: [Shown]) -> String {
        let slowest = runs.count > 1 ? runs.indices.max { runs[$0].selfTime < runs[$1].selfTime } : nil
        var text = ""
        for (index, run) in runs.enumerated() {
            var times = "  \(seconds(run.total)), self \(seconds(run.selfTime))"
            if let at = run.at { times += ", at +\(seconds(at))" }
            text += line(run.depth, run.name, times + (index == slowest ? "  ← slowest" : ""))
            let other = run.total - run.selfTime - run.nested
            if other > .zero { text += line(run.depth + 1, "other nested resolves", "  \(seconds(other))") }
        }
        return text
    }

    /// One run, indented under its parent (at most 16 levels: a chain through a cycle can be deep).
    private static func line(_ depth: Int, _ name: String, _ rest: String) -> String {
        let indent = min(depth, 16)
        return "  " + String(repeating: "   ", count: max(0, indent - 1)) + (indent > 0 ? "└─ " : "") + name.logSafe + rest + "\n"
    }

    private static func micros(_ value: UInt64) -> String { seconds(.microseconds(value)) }
    private static func seconds(_ value: Duration) -> String { StatusDocument.seconds(value.totalSeconds) }
}
