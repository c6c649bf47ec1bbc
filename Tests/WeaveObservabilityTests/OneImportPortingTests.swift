import Testing
import WeaveObservability

// This file imports WeaveObservability alone, as docs/porting.md tells a program written against
// the seed's `import WeaveDI` to: the container, its wrappers, `HealthCheckable` and
// `HealthMonitor(container:)` must all be reachable through it, or this file does not compile.

private protocol Ledger: Sendable { func balance() -> Int }
private final class PostgresLedger: Ledger, HealthCheckable {
    func balance() -> Int { 42 }
    func healthCheck() async -> HealthStatus { .degraded(reason: "replica lag") }
}

private struct Teller {
    @Inject var ledger: Ledger?
}

@Suite struct OneImportPortingTests {
    @Test func theSeedsAPIIsReachableThroughOneImport() async {
        let container = WeaveDI.Container()
        container.register(Ledger.self, scope: .singleton) { PostgresLedger() }
        container.register(PostgresLedger.self, scope: .singleton) { PostgresLedger() }
        let teller = withContainer(container) { Teller() }
        #expect(withContainer(container) { teller.ledger?.balance() } == 42)
        let report = await HealthMonitor(container: container).checkAll()
        #expect(report.statuses["PostgresLedger"]?.state == .degraded)
    }
}
