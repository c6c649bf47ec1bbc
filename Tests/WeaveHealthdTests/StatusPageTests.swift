import Foundation
import Testing
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
@testable import WeaveHealthd
import WeaveMemoryPressure
import WeaveObservability
import WeavePrometheus

private struct Failure: Error, CustomStringConvertible { let description: String }

/// A record whose state began at `changedAt` (by the check's clock, or the application's).
private func record(_ name: String, _ status: HealthStatus, app: Bool = false, changedAt: Double = 1_800_000_000) -> HealthCheckRecord {
    HealthCheckRecord(name: name, status: status, lastResult: status, changedAt: changedAt, checkedAt: changedAt, lastDuration: .zero,
                      consecutiveFailures: 0, consecutiveSuccesses: 0, groups: app ? [HealthCheckSettings.application] : [])
}

@Suite struct StatusHistoryTests {
    @Test func keepsTheWorstStateOfEachMinuteAndTheTransitions() {
        let history = StatusHistory()
        let start = 1_800_000_000.0 // a whole minute
        history.record([record("db", .healthy, changedAt: start)], at: start)
        history.record([record("db", .degraded(reason: "slow"), changedAt: start + 8)], at: start + 10)
        // Recorded at +20, a transition the check made at +17: its own time, not the sample's.
        history.record([record("db", .healthy, changedAt: start + 17)], at: start + 20)
        history.record([record("db", .healthy, changedAt: start + 17)], at: start + 125) // two minutes on
        let (tracks, transitions, shift) = history.snapshot(at: start + 125)
        let track = tracks["db"]!
        #expect(shift == 0)
        #expect(track.hour.states.suffix(3) == [.degraded, nil, .healthy]) // the worst of the first minute; none recorded in the second
        #expect(track.hour.states.count == 60 && track.hour.states.dropLast(3).allSatisfy { $0 == nil })
        // Read a minute later without a record in between: moved on, the new minute without one.
        let later = history.snapshot(at: start + 185)
        #expect(later.shift == 1 && later.tracks["db"]!.hour.shifted(by: later.shift).states.suffix(3) == [nil, .healthy, nil])
        #expect(track.hour.shifted(by: 60).states.allSatisfy { $0 == nil })
        #expect(track.state == .healthy && track.since == start + 17 && !track.sinceStart)
        #expect(transitions.map(\.change) == [.state(from: .healthy, to: .degraded), .state(from: .degraded, to: .healthy)])
        #expect(transitions.map(\.time) == [start + 8, start + 17])
        #expect(transitions[0].reason == "slow")
        // An hour later, without a record, it is forgotten; the transitions stay, bounded.
        history.record([record("other", .healthy)], at: start + 3_800)
        #expect(history.snapshot(at: start + 3_800).tracks["db"] == nil)
    }

    /// An application that runs anew starts its checks' history again (since, not "≥"), and one that
    /// left gracefully is a transition too; a restart of the daemon's view (a reload) is neither.
    @Test func aRestartStartsTheHistoryAgainAndALeaveIsATransition() {
        let history = StatusHistory()
        let start = 1_800_000_000.0
        let checks = [record("orders", .healthy, app: true), record("orders/db", .healthy, app: true)]
        history.record(checks, apps: [("orders", start - 600)], at: start)
        history.record(checks, apps: [("orders", nil)], at: start + 5) // a new runtime that has not read it yet
        history.record(checks, apps: [("orders", start + 7)], at: start + 10)
        let restarted = history.snapshot(at: start + 10)
        #expect(restarted.transitions.map(\.change) == [.restarted])
        #expect(restarted.transitions.first?.time == start + 7)
        #expect(restarted.tracks["orders/db"]?.since == start + 7 && restarted.tracks["orders/db"]?.sinceStart == false)
        history.record([], apps: [], at: start + 20)
        #expect(history.snapshot(at: start + 20).transitions.map(\.change) == [.restarted, .left(from: .healthy)])
    }

    @Test func isBounded() {
        let history = StatusHistory()
        for index in 0..<(StatusHistory.maxTransitions + 50) {
            history.record([record("flap", index.isMultiple(of: 2) ? .healthy : .unhealthy(error: Failure(description: "down")))],
                           at: 1_800_000_000 + Double(index))
        }
        #expect(history.snapshot(at: 1_800_000_300).transitions.count == StatusHistory.maxTransitions)
        history.record((0..<(StatusHistory.maxNames + 10)).map { record("c\($0)", .healthy) }, at: 1_800_000_400)
        #expect(history.snapshot(at: 1_800_000_400).tracks.count == StatusHistory.maxNames)
    }
}

@Suite struct StatusPageTests {
    private func page(details: Bool, filter: String? = nil) -> String {
        let records = [
            record("disk-root", .degraded(reason: "9% free")),
            record("orders", .degraded(reason: "the application reports warn"), app: true),
            record("orders/payments", .degraded(reason: "provider answers in 2.4 s <b>"), app: true),
            record("billing", .unhealthy(error: Failure(description: "billing is down: connection refused")), app: true),
        ]
        let history = StatusHistory()
        history.record(records, at: 1_800_000_000)
        let summary = DependencySummary(version: "1.4.0", startedAt: 1_799_996_400, dependencies: [
            .init(name: "ReportBuilder", resolutions: 12, slow: 3, errors: 1, p50: 0.025, p99: 0.0262),
        ])
        let apps = [
            AppFleet.AppView(name: "orders", address: "unix:/run/weave/apps/orders.sock", reachable: true, reason: nil,
                             dependencies: AppDependencies(summary, at: 1_800_000_000, after: nil)),
            AppFleet.AppView(name: "billing", address: "unix:/run/weave/apps/billing.sock", reachable: false,
                             reason: "connection refused", dependencies: nil),
        ]
        let document = StatusDocument(report: HealthReport(checks: Dictionary(uniqueKeysWithValues: records.map { ($0.name, $0) })),
                                      apps: apps, history: history.snapshot(at: 1_800_000_030), now: 1_800_000_030,
                                      details: details, filter: filter)
        return document.render(ServiceIdentity(serviceID: "weave-healthd", description: "", version: "0.1.0"))
    }

    @Test func showsTheApplicationsTheirChecksAndTheirSlowestDependencies() {
        let html = page(details: true)
        #expect(html.contains("<h3>billing <span class=\"state down\">down</span>"))
        // The dependencies' figures say when they were read (/metrics reads afresh).
        #expect(html.contains("<caption>Slowest dependencies <span class=\"meta\">(read 30 s ago)</span></caption>"))
        #expect(html.contains("<p class=\"reason\">connection refused</p>"))
        #expect(html.contains("<h3>orders <span class=\"state degraded\">up, degraded</span>"))
        #expect(html.contains("version 1.4.0 · up 1 h 0 min"))
        #expect(html.contains("<td>payments</td><td class=\"state degraded\">degraded</td><td>provider answers in 2.4 s &lt;b&gt;</td><td>≥ 30 s</td>"))
        #expect(html.contains("<td>ReportBuilder</td><td>25 ms</td><td>26.2 ms</td><td>–</td><td>3</td><td>1</td>"))
        #expect(html.contains("<section id=\"own\">\n<h2>The daemon's own checks</h2>") && html.contains("<td>9% free</td>"))
        #expect(!html.contains("<b>"), "reasons are escaped")
    }

    /// Worst first, whatever the names: down, unhealthy, degraded, healthy.
    @Test func listsApplicationsWorstFirst() {
        let records = [record("alpha", .healthy, app: true), record("bravo", .degraded(reason: "slow"), app: true),
                       record("charlie", .unhealthy(error: Failure(description: "broken")), app: true)]
        let apps = ["alpha", "bravo", "charlie", "zulu"].map {
            AppFleet.AppView(name: $0, address: "unix:/run/weave/apps/\($0).sock", reachable: $0 != "zulu", reason: nil, dependencies: nil)
        }
        let html = StatusDocument(report: HealthReport(checks: Dictionary(uniqueKeysWithValues: records.map { ($0.name, $0) })),
                                  apps: apps, history: StatusHistory().snapshot(at: 0), now: 0, details: true, filter: nil)
            .render(ServiceIdentity(serviceID: "weave-healthd", description: "", version: "0.1.0"))
        let order = ["zulu", "charlie", "bravo", "alpha"].map { html.range(of: "<h3>\($0) ")!.lowerBound }
        #expect(order == order.sorted())
    }

    /// Without authorization, no reasons, as in `/health`.
    @Test func showsNoReasonsWithoutDetails() {
        let html = page(details: false)
        for reason in ["connection refused", "9% free", "provider answers", "application reports"] {
            #expect(!html.contains(reason), "\(reason)")
        }
        #expect(html.contains("Reasons are not shown to this client"))
    }

    @Test func filtersByApplication() {
        let html = page(details: true, filter: "orders")
        #expect(html.contains("id=\"app-orders\"") && !html.contains("id=\"app-billing\""))
        #expect(html.contains("<option selected>orders</option>") && html.contains("id=\"own\""))
        #expect(page(details: true, filter: "nope").contains("No application named nope."))
    }

    /// Figures an application sends are written whatever their size, never trapping.
    @Test func hugeFiguresAreWritten() {
        #expect(StatusDocument.rate(1.8e22) == "1.8e+22" && StatusDocument.rate(12.345) == "12.3" && StatusDocument.rate(0.01) == "0")
        #expect(StatusDocument.seconds(5e-7) == "500 ns" && StatusDocument.seconds(0.0262) == "26.2 ms")
    }

    /// Past 4 MiB the page names the applications it leaves out instead of growing.
    @Test func isBoundedInSize() {
        let reason = String(repeating: "r", count: 1_000)
        var records: [HealthCheckRecord] = []
        var apps: [AppFleet.AppView] = []
        for app in 0..<40 {
            let name = "app-\(app)"
            records.append(record(name, .healthy, app: true))
            for check in 0..<200 { records.append(record("\(name)/check-\(check)", .degraded(reason: reason), app: true)) }
            apps.append(AppFleet.AppView(name: name, address: "unix:/x/\(name).sock", reachable: true, reason: nil, dependencies: nil))
        }
        let document = StatusDocument(report: HealthReport(checks: Dictionary(uniqueKeysWithValues: records.map { ($0.name, $0) })),
                                      apps: apps, history: StatusHistory().snapshot(at: 0), now: 0, details: true, filter: nil)
        let html = document.render(ServiceIdentity(serviceID: "weave-healthd", description: "", version: "0.1.0"))
        // Each application is about 240 KB here: the page stops after the one that crosses 4 MiB.
        #expect(html.utf8.count > DaemonStatusPage.maxBytes && html.utf8.count < DaemonStatusPage.maxBytes + 300_000)
        #expect(html.contains("more applications are not shown: the page is full. Choose one above."))
        #expect(html.hasSuffix("</html>\n"))
    }
}

@Suite struct AppDependenciesTests {
    private func summary(_ counts: [String: UInt64]) -> DependencySummary {
        DependencySummary(version: "1", startedAt: nil, dependencies: counts.sorted { $0.key < $1.key }.map {
            .init(name: $0.key, resolutions: $0.value, slow: 0, errors: 0, p50: nil, p99: nil)
        })
    }

    /// Resolves per second are the counts' difference over the time between two reads; a count that
    /// went down (a restarted application) or a dependency new in the second read has no rate.
    @Test func ratesAreTheDifferenceOverTheInterval() {
        let first = AppDependencies(summary(["Database": 100, "Cache": 50, "Report": 7]), at: 1_000, after: nil)
        #expect(first.rates.isEmpty)
        let second = AppDependencies(summary(["Database": 350, "Cache": 10, "Report": 7, "New": 3]), at: 1_005, after: first)
        #expect(second.rates == ["Database": 50, "Report": 0])
    }
}
