import Testing
@testable import WeaveHealthd
import WeaveHealth
import WeaveSystemd

@Suite struct SystemdUnitCheckTests {
    private func unit(_ active: String, _ sub: String, load: String = "loaded", result: String? = "success", restarts: UInt32? = 0) -> SystemdUnit {
        SystemdUnit(name: "api.service", loadState: load, activeState: active, subState: sub, result: result, restarts: restarts,
                    stateChangedAt: nil)
    }

    @Test func statesMapToHealthAsSystemctlWouldSayThem() {
        #expect(SystemdUnitCheck.health(unit("active", "running")).state == .healthy)
        #expect(SystemdUnitCheck.health(unit("reloading", "reload")).state == .degraded)
        #expect(SystemdUnitCheck.health(unit("activating", "start")).state == .degraded)
        let restarting = SystemdUnitCheck.health(unit("activating", "auto-restart", result: "exit-code", restarts: 3))
        #expect(restarting.state == .unhealthy)
        #expect(restarting.reason == "api.service is activating (auto-restart), last result exit-code, restarted 3 times")
        #expect(SystemdUnitCheck.health(unit("failed", "failed", result: "signal")).reason == "api.service is failed (failed), last result signal")
        #expect(SystemdUnitCheck.health(unit("inactive", "dead")).state == .unhealthy)
        #expect(SystemdUnitCheck.health(unit("inactive", "dead", load: "not-found")).reason == "api.service does not exist (LoadState not-found)")
    }

    @Test func theUnitIsANameWithItsType() throws {
        for bad in ["postgresql", "../etc/passwd.service", ""] {
            #expect(throws: ConfigurationError.self) {
                try ConfigurationLoader(file: "t.yaml", text: "checks:\n  - {name: u, type: systemd_unit, unit: \"\(bad)\"}").parse()
            }
        }
        let configuration = try ConfigurationLoader(file: "t.yaml", text: "checks:\n  - {name: u, type: systemd_unit, unit: cron.timer}").parse()
        #expect(configuration.checks.map(\.name) == ["u"])
    }
}
