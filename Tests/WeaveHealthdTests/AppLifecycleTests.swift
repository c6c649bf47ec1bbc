import Testing
@testable import weave_healthd
import WeaveSystemd

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
}
