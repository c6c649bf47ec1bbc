import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveObservability
import WeavePrometheus
import WeaveSupport

/// One rendering of the page, from what the daemon knows at one moment.
struct StatusDocument {
    let report: HealthReport
    let apps: [AppFleet.AppView]
    let history: (tracks: [String: StatusHistory.Track], transitions: [StatusHistory.Transition], shift: Int)
    let now: Double
    let details: Bool
    let filter: String?
    /// The strips written so far, by pattern.
    private let strips = Strips()

    private final class Strips {
        var made: [StatusHistory.Hour: String] = [:]
    }

    init(report: HealthReport, apps: [AppFleet.AppView],
         history: (tracks: [String: StatusHistory.Track], transitions: [StatusHistory.Transition], shift: Int),
         now: Double, details: Bool, filter: String?) {
        self.report = report
        self.apps = apps
        self.history = history
        self.now = now
        self.details = details
        self.filter = filter
    }

    func render(_ identity: ServiceIdentity) -> String {
        let records = report.checks.values.sorted { $0.name < $1.name }
        let own = records.filter { !$0.groups.contains(HealthCheckSettings.application) }
        let components = Dictionary(grouping: records.filter { $0.groups.contains(HealthCheckSettings.application) }) { record in
            record.name.firstIndex(of: "/").map { String(record.name[..<$0]) } ?? record.name
        }
        // Worst first: down, then unhealthy, degraded and healthy by their own word, each by name.
        let shown = apps.filter { filter == nil || $0.name == filter }.sorted {
            (severity($0, components[$0.name] ?? []), $1.name) > (severity($1, components[$1.name] ?? []), $0.name)
        }
        let down = apps.filter { $0.reachable == false }.count
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(identity.serviceID)): \(report.aggregate.rawValue)</title>
            <style>\(Self.style)</style>
            </head>
            <body>
            <header>
            <h1>\(HTML.escape(identity.serviceID)) <span class="state \(report.aggregate.rawValue)">\(report.aggregate.rawValue)</span></h1>
            <p>\(apps.count) applications, \(down) down · \(own.count) checks of its own · version \(HTML.escape(identity.version)) · \(Timestamp.readable(now))</p>

            """
        if !details { html += "<p class=\"note\">Reasons are not shown to this client (the daemon's <code>details:</code>).</p>\n" }
        html += "<form method=\"get\" action=\"/\"><label for=\"app\">Application</label> <select id=\"app\" name=\"app\">"
        html += "<option value=\"\"\(filter == nil ? " selected" : "")>all</option>"
        for app in apps {
            html += "<option\(app.name == filter ? " selected" : "")>\(HTML.escape(app.name))</option>"
        }
        html += "</select> <button type=\"submit\">Show</button></form>\n</header>\n<main>\n"
        html += "<section id=\"applications\">\n<h2>Applications</h2>\n"
        if let filter, shown.isEmpty { html += "<p>No application named \(HTML.escape(filter)).</p>\n" }
        if apps.isEmpty { html += "<p>None found: applications appear here when they publish a socket in the discovery directory.</p>\n" }
        var left = 0
        for app in shown {
            if html.utf8.count > DaemonStatusPage.maxBytes {
                left += 1
                continue
            }
            html += application(app, components[app.name] ?? [])
        }
        if left > 0 { html += "<p class=\"note\">\(left) more applications are not shown: the page is full. Choose one above.</p>\n" }
        html += "</section>\n<section id=\"own\">\n<h2>The daemon's own checks</h2>\n" + checks(own, prefix: "") + "</section>\n"
        html += transitions() + "</main>\n"
        html += "<footer><a href=\"/metrics\">/metrics</a> · <a href=\"/health\">/health</a> · <a href=\"/livez?verbose\">/livez</a> · "
        html += "<a href=\"/readyz?verbose\">/readyz</a> · history kept in memory for an hour, lost on restart</footer>\n</body>\n</html>\n"
        return html
    }

    /// 3 down, 2 unhealthy, 1 degraded, 0 healthy (or not asked yet).
    private func severity(_ app: AppFleet.AppView, _ records: [HealthCheckRecord]) -> Int {
        guard app.reachable != false else { return 3 }
        switch records.first(where: { $0.name == app.name })?.status.state {
        case .unhealthy?: return 2
        case .degraded?: return 1
        default: return 0
        }
    }

    private func application(_ app: AppFleet.AppView, _ records: [HealthCheckRecord]) -> String {
        let up = app.reachable != false
        let name = HTML.escape(app.name)
        // Up, and what the application says of itself (its own aggregate), or down (a colour of its own).
        let state = up ? records.first { $0.name == app.name }?.status.state ?? .healthy : .unhealthy
        var html = "<article class=\"app\" id=\"app-\(name)\">\n<h3>\(name) <span class=\"state \(up ? state.rawValue : "down")\">"
        html += up ? (state == .healthy ? "up" : "up, \(state.rawValue)") : "down"
        html += "</span>\(strip(app.name))</h3>\n<p class=\"meta\">"
        var meta: [String] = []
        if let summary = app.dependencies?.summary {
            meta.append("version \(HTML.escape(summary.version))")
            if up, let started = summary.startedAt { meta.append("up \(Self.duration(now - started))") }
        }
        meta.append(HTML.escape(app.address))
        html += meta.joined(separator: " · ") + "</p>\n"
        if !up, details, let reason = app.reason { html += "<p class=\"reason\">\(HTML.escape(reason))</p>\n" }
        let own = records.filter { $0.name != app.name }
        if !own.isEmpty { html += checks(own, prefix: app.name + "/") }
        // A down application's last figures stay, with their age.
        if let dependencies = app.dependencies, !dependencies.summary.dependencies.isEmpty {
            html += slowest(dependencies, down: !up)
        }
        if let startup = app.dependencies?.summary.startup, !startup.runs.isEmpty { html += waterfall(startup) }
        return html + "</article>\n"
    }

    /// The application's startup as a waterfall: its longest first factory runs (20 by default),
    /// in start order, each indented under its parent, with a bar from its start to its end.
    private func waterfall(_ startup: StartupTree) -> String {
        let span = max(startup.runs.map { $0.start + $0.total }.max() ?? .zero, .nanoseconds(1))
        let caption = "Startup: resolving took \(Self.seconds(startup.total.totalSeconds))"
            + (startup.ended ? "" : ", still starting") + (startup.omitted > 0 ? ", \(startup.omitted) shorter runs not shown" : "")
        var html = "<table class=\"startup\"><caption>\(caption)</caption>"
        html += "<thead><tr><th>dependency</th><th>start</th><th>total</th><th>self</th><th></th></tr></thead>\n<tbody>\n"
        for run in startup.runs {
            // Its depth among the runs listed (a parent not listed ends the count), bounded for the indent.
            let depth = min(startup.chain(to: run.service).count - 1, 8)
            let offset = 100 * (run.start / span), width = max(100 * (run.total / span), 0.5)
            html += "<tr><td style=\"padding-left:\(Double(depth) + 0.8)em\">\(HTML.escape(run.service))</td>"
            html += "<td>\(Self.seconds(run.start.totalSeconds))</td><td>\(Self.seconds(run.total.totalSeconds))</td>"
            html += "<td>\(Self.seconds(run.selfTime.totalSeconds))</td><td class=\"bar\"><i style=\"margin-left:\(String(format3: min(offset, 99.5)))%;"
            html += "width:\(String(format3: min(width, 100 - min(offset, 99.5))))%\"></i></td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    private func checks(_ records: [HealthCheckRecord], prefix: String) -> String {
        guard !records.isEmpty else { return "<p>No checks.</p>\n" }
        var html = "<table class=\"checks\"><thead><tr><th>check</th><th>state</th>"
        if details { html += "<th>reason</th>" }
        html += "<th>since</th><th>checked</th><th>last hour</th></tr></thead>\n<tbody>\n"
        for record in records {
            let state = record.status.state.rawValue
            html += "<tr><td>\(HTML.escape(String(record.name.dropFirst(prefix.count))))</td><td class=\"state \(state)\">\(state)</td>"
            if details { html += "<td>\(HTML.escape(record.status.reason ?? ""))</td>" }
            html += "<td>\(since(record))</td><td>\(Self.duration(now - record.checkedAt)) ago</td><td>\(strip(record.name))</td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    /// The application's slowest dependencies as its `/dependencies` said at the daemon's last read,
    /// which the caption dates: `/metrics` reads the application afresh at each scrape.
    private func slowest(_ dependencies: AppDependencies, down: Bool) -> String {
        let age = "read \(Self.duration(now - dependencies.readAt)) ago\(down ? ", before it went down" : "")"
        var html = "<table class=\"deps\"><caption>Slowest dependencies <span class=\"meta\">(\(age))</span></caption>"
        html += "<thead><tr><th>dependency</th><th>p50</th>"
        html += "<th>p99</th><th>resolves/s</th><th>slow</th><th>errors</th></tr></thead>\n<tbody>\n"
        for dependency in dependencies.summary.dependencies {
            let rate = dependencies.rates[dependency.name].map(Self.rate) ?? "–"
            html += "<tr><td>\(HTML.escape(dependency.name))</td><td>\(dependency.p50.map(Self.seconds) ?? "–")</td>"
            html += "<td>\(dependency.p99.map(Self.seconds) ?? "–")</td><td>\(rate)</td><td>\(dependency.slow)</td><td>\(dependency.errors)</td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    private func transitions() -> String {
        let shown = history.transitions.reversed().filter { filter == nil || $0.name == filter || $0.name.hasPrefix(filter! + "/") }
        var html = "<section id=\"transitions\">\n<h2>Recent transitions</h2>\n"
        guard !shown.isEmpty else { return html + "<p>None since the daemon started.</p>\n</section>\n" }
        html += "<table><thead><tr><th>when</th><th>check</th><th>change</th>\(details ? "<th>reason</th>" : "")</tr></thead>\n<tbody>\n"
        for transition in shown {
            html += "<tr><td>\(Timestamp.readable(transition.time))</td><td>\(HTML.escape(transition.name))</td><td>"
            switch transition.change {
            case .state(let from, let to):
                html += "<span class=\"state \(from.rawValue)\">\(from.rawValue)</span> → <span class=\"state \(to.rawValue)\">\(to.rawValue)</span>"
            case .restarted:
                html += "<span class=\"state\">restarted</span>"
            case .left(let from):
                html += "<span class=\"state \(from.rawValue)\">\(from.rawValue)</span> → <span class=\"state left\">left</span>"
            }
            html += "</td>"
            if details { html += "<td>\(HTML.escape(transition.reason ?? ""))</td>" }
            html += "</tr>\n"
        }
        return html + "</tbody></table>\n</section>\n"
    }

    /// When `record`'s state began, by the record's own time (the check's, or the application's,
    /// as `/health` gives it): "4 min", or "≥ 4 min" when that is only when the daemon first saw it.
    private func since(_ record: HealthCheckRecord) -> String {
        let firstSight = history.tracks[record.name].map { $0.sinceStart && $0.state == record.status.state && record.changedAt >= $0.since - 1 }
        return (firstSight == true ? "≥ " : "") + Self.duration(max(0, now - record.changedAt))
    }

    /// The last hour of `name`, one cell per run of minutes in the same state. Most rows share a
    /// pattern (healthy all along): each pattern is written once per page.
    private func strip(_ name: String) -> String {
        guard let track = history.tracks[name] else { return "" }
        let hour = track.hour.shifted(by: history.shift)
        if let made = strips.made[hour] { return made }
        var runs: [(HealthState?, Int)] = []
        for minute in hour.states {
            if let last = runs.last, last.0 == minute { runs[runs.count - 1].1 += 1 } else { runs.append((minute, 1)) }
        }
        let label = runs.reversed().map { "\($0.0?.rawValue ?? "no record") \($0.1) min" }.joined(separator: ", ")
        var html = "<span class=\"strip\" role=\"img\" aria-label=\"last hour, latest first: \(label)\">"
        for (state, length) in runs { html += "<i class=\"\(state?.rawValue ?? "none")\" style=\"flex:\(length)\"></i>" }
        html += "</span>"
        strips.made[hour] = html
        return html
    }

    static func duration(_ seconds: Double) -> String {
        let whole = max(0, Int(checked: min(seconds, 1e12)) ?? 0) // an application's start time may be anything
        if whole < 60 { return "\(whole) s" }
        if whole < 3_600 { return "\(whole / 60) min" }
        if whole < 86_400 { return "\(whole / 3_600) h \(whole % 3_600 / 60) min" }
        return "\(whole / 86_400) d \(whole % 86_400 / 3_600) h"
    }

    static func seconds(_ value: Double) -> String {
        switch value {
        case ..<1e-6: return String(format3: value * 1e9) + " ns"
        case ..<1e-3: return String(format3: value * 1e6) + " µs"
        case ..<1: return String(format3: value * 1e3) + " ms"
        default: return String(format3: value) + " s"
        }
    }

    static func rate(_ value: Double) -> String { value < 0.05 ? "0" : String(format3: value) }

    static let style = """
        body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}h1,h2,h3{margin:.6em 0 .3em}\
        table{border-collapse:collapse;margin:.4em 0 1em}th,td{padding:.2em .8em;text-align:left;border-bottom:1px solid #ddd}\
        caption{text-align:left;font-weight:bold;padding:.2em 0}.state{font-weight:bold}.healthy{color:#070}\
        .degraded{color:#a60}.unhealthy{color:#b00}.down{color:#fff;background:#700;padding:0 .3em}.left{color:#666}\
        .meta,.note{color:#666}.reason{color:#b00}\
        .app{border-top:2px solid #ccc;padding-top:.3em}\
        .strip{display:inline-flex;width:12em;height:.9em;margin-left:.5em;vertical-align:middle;background:#eee}\
        .strip i{display:block}.strip .healthy{background:#3a3}.strip .degraded{background:#e90}\
        .strip .unhealthy{background:#d22}.strip .none{background:#eee}\
        .startup .bar{width:16em}.startup .bar i{display:block;height:.8em;background:#58c}
        """
}

private extension String {
    /// `value` with three significant digits at most ("25.1", "0.5", "140").
    init(format3 value: Double) {
        // Whatever an application sends: a figure past any real one is written as it came, not rounded to an Int.
        guard value.isFinite, abs(value) < 1e15 else {
            self = "\(value)"
            return
        }
        let digits = value >= 100 ? 0 : value >= 10 ? 1 : 2
        let scale = [1.0, 10.0, 100.0][digits]
        let rounded = (value * scale).rounded() / scale
        var text = digits == 0 ? "\(Int(rounded))" : "\(rounded)"
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        self = text
    }
}
