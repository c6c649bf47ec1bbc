import Testing
@testable import WeaveHealthd
import WeaveDI
import WeaveHealth
import WeaveMemoryPressure
import WeaveSupport
import WeaveSystemd

@Suite struct SystemdIntegrationTests {
    private func report(_ states: [String: HealthStatus]) -> HealthReport {
        var records: [String: HealthCheckRecord] = [:]
        for (name, status) in states {
            records[name] = HealthCheckRecord(name: name, status: status, lastResult: status, changedAt: 0, checkedAt: 0,
                                              lastDuration: .zero, consecutiveFailures: 0, consecutiveSuccesses: 0, groups: [])
        }
        return HealthReport(checks: records)
    }

    @Test func statusLineCountsAndNamesTheUnhealthy() {
        #expect(NotifyService.statusLine(report([:])) == "0 checks")
        #expect(NotifyService.statusLine(report(["a": .healthy])) == "1 check: 1 healthy")
        let mixed = report(["a": .healthy, "b": .healthy, "disk-root": .degraded(reason: "3% free"),
                            "tcp": .unhealthy(error: HealthCheckError.timedOut(after: .seconds(1))), "api": .degraded(reason: "slow")])
        #expect(NotifyService.statusLine(mixed) == "5 checks: 2 healthy, 2 degraded (api, disk-root), 1 unhealthy (tcp)")
        // The applications, as /health counts them: up, down by name; one not yet read is neither.
        let apps = [("billing", true), ("inventory", false), ("orders", true), ("new", nil), ("shop", false)].map { name, reachable in
            AppFleet.AppView(name: name, address: "unix:/run/weave/apps/\(name).sock", reachable: reachable, reason: nil, dependencies: nil)
        }
        #expect(NotifyService.statusLine(report(["a": .healthy]), apps: apps) == "1 check: 1 healthy; apps: 2 up, 2 down (inventory, shop)")
    }

    /// The catalog under systemd/ explains exactly the events the code logs.
    @Test func catalogMatchesTheEvents() throws {
        let path = #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/systemd/weave-healthd.catalog"
        let catalog = try #require(readTextFile("/" + path))
        let ids = catalog.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) }
        let events = WeaveEvent.containerEvents + WeaveEvent.pressureEvents + WeaveEvent.healthEvents + WeaveEvent.daemonEvents
        let logged = events.map(\.messageID) + [JournalWriter.lostEntriesMessageID]
        #expect(Set(ids) == Set(logged))
        #expect(ids.count == logged.count)
    }
}
