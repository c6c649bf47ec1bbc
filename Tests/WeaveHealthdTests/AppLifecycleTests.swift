import Glibc
import Testing
@testable import WeaveHealthd
import WeaveSystemd
import WeaveTestSupport

/// What the daemon tells of an application's life, across reloads.
@Suite struct AppLifecycleTests {
    private func unit(_ active: String, file: String?, load: String = "loaded") -> SystemdUnit {
        SystemdUnit(name: "orders.service", loadState: load, activeState: active, subState: "dead", result: "success", restarts: 0,
                    stateChangedAt: nil, unitFileState: file)
    }

    /// Stopped while enabled: down and expected back; disabled, masked or removed: it left; a
    /// restart in progress: decided later.
    @Test func theUnitSaysWhetherAGoneApplicationStoppedOrLeft() {
        #expect(AppLifecycle.verdict(unit("inactive", file: "enabled")) == .stopped)
        #expect(AppLifecycle.verdict(unit("failed", file: "enabled")) == .stopped)
        #expect(AppLifecycle.verdict(unit("inactive", file: "static")) == .stopped)
        #expect(AppLifecycle.verdict(unit("inactive", file: "disabled")) == .left)
        #expect(AppLifecycle.verdict(unit("inactive", file: "masked")) == .left)
        #expect(AppLifecycle.verdict(unit("inactive", file: "masked", load: "masked")) == .left)
        #expect(AppLifecycle.verdict(unit("inactive", file: nil, load: "not-found")) == .left)
        #expect(AppLifecycle.verdict(unit("inactive", file: nil)) == .left, "a unit systemd says nothing of is not expected back")
        for active in ["activating", "deactivating", "active", "reloading"] {
            #expect(AppLifecycle.verdict(unit(active, file: "enabled")) == .changing)
        }
    }

    /// Each change is news once, whichever fleet (runtime) notes it: a reload logs nothing.
    @Test func aChangeIsToldOnceAndAStoppedApplicationStaysATarget() {
        let lifecycle = AppLifecycle()
        #expect(lifecycle.announce("orders", up: true))
        #expect(!lifecycle.announce("orders", up: true), "the same state again: a reload's new fleet")
        let target = AppTarget(name: "orders", address: .unix(path: "/run/weave/apps/orders.sock"), host: "localhost", pathPrefix: "",
                               unit: "orders.service")
        lifecycle.stop(target)
        #expect(lifecycle.announce("orders", up: false))
        #expect(lifecycle.isStopped("orders") && lifecycle.stoppedTargets() == [target])
        #expect(lifecycle.announce("orders", up: true), "back")
        #expect(!lifecycle.isStopped("orders"))
        lifecycle.forget("orders")
        #expect(lifecycle.announce("orders", up: true), "after it left, its return is news")
    }

    /// One user's applications at their bound of names (4,096), all down, leave room for another
    /// user's: the table holds as many as names can be bound (#64: it held 4,096, and a new
    /// application's "is up" was dropped with no log and no counter).
    @Test func oneUsersApplicationsLeaveRoomForAnothers() {
        let lifecycle = AppLifecycle()
        for index in 0..<AppOwners.maxNamesPerUser { #expect(lifecycle.announce("stale-\(index)", up: false)) }
        #expect(lifecycle.announce("newcomer", up: true), "another user's new application is news")
        #expect(AppLifecycle.maxApps >= AppOwners.maxNames && AppEventJournal.maxApps >= AppOwners.maxNames
                    && AppSlowChains.maxApps >= AppOwners.maxNames)
    }

    /// The stopped applications outlive the daemon (an upgrade restarts it): a new one reads them
    /// back and shows them down; a file that is not one is said and not used.
    @Test func theStoppedApplicationsAreKeptAcrossARestart() async throws {
        let path = "/tmp/weave-stopped-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
        defer { unlink(path) }
        let target = AppTarget(name: "orders", address: .unix(path: "/run/weave/apps/orders.sock"), host: "localhost", pathPrefix: "",
                               unit: "orders.service")
        let before = AppLifecycle(file: StateFile(path: path, what: AppLifecycle.what))
        before.stop(target)
        await before.persist(with: BlockingCalls())
        #expect(AppLifecycle(file: StateFile(path: path, what: AppLifecycle.what)).stoppedTargets() == [target])
        #expect(before.announce("orders", up: true), "back")
        await before.persist(with: BlockingCalls())
        #expect(AppLifecycle(file: StateFile(path: path, what: AppLifecycle.what)).stoppedTargets().isEmpty)

        for broken in [#"{"stopped":[{"app":"orders","socket":"relative.sock","unit":"orders.service"}]}"#,
                       #"{"stopped":[{"app":"orders","socket":"/s.sock","unit":"../../etc/passwd"}]}"#, #"{"stopped":"#] {
            let handle = fopen(path, "w")!
            fputs(broken, handle)
            fclose(handle)
            let records = LogRecords()
            let lifecycle = AppLifecycle(file: StateFile(path: path, what: AppLifecycle.what, logger: records.logger))
            #expect(lifecycle.stoppedTargets().isEmpty && records.entries.count == 1, "\(broken)")
        }
    }
}
