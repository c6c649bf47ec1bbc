import Testing
import WeaveHealth
@testable import WeaveHealthd

/// A check's observed value belongs to the run that observed it.
@Suite struct ObservationsTests {
    /// Records a status like the http check: on an answer only.
    private struct Flaky: HealthCheckable {
        let answers: Bool
        let observations: Observations
        func healthCheck() async -> HealthStatus {
            guard answers else { return .unhealthy(error: CheckFailure("connection refused")) }
            observations.record("web", value: 200, unit: "status")
            return .healthy
        }
    }

    @Test func aFailedRunClearsTheLastSuccesssValue() async {
        let observations = Observations()
        let up = ObservedCheck(name: "web", check: Flaky(answers: true, observations: observations), observations: observations)
        let down = ObservedCheck(name: "web", check: Flaky(answers: false, observations: observations), observations: observations)
        #expect(await up.healthCheck().state == .healthy)
        #expect(observations.value(of: "web")?.value == 200)
        #expect(await down.healthCheck().state == .unhealthy)
        #expect(observations.value(of: "web") == nil)
        #expect(await up.healthCheck().state == .healthy)
        #expect(observations.value(of: "web")?.value == 200)
    }

    /// Two check types that keep the same Swift type see only their own checks' observations.
    @Test func observationsAreKeptByCheckType() {
        let observations = Observations()
        observations.record("web", of: HTTPCheck.Options.self, [Perfdata]())
        observations.record("backup", of: ExecCheck.Options.self, [Perfdata]())
        #expect(Array(observations.all(of: ExecCheck.Options.self, as: [Perfdata].self).keys) == ["backup"])
        #expect(Array(observations.all(of: HTTPCheck.Options.self, as: [Perfdata].self).keys) == ["web"])
    }
}
