import Synchronization
import WeaveAppEndpoint

/// The order store. Checked by weave-healthd as `<app>/Database`.
final class Database: HealthCheckable {
    func healthCheck() async -> HealthStatus { .healthy }
    func orders() -> [String] { ["A-1001", "A-1002"] }
}

/// An upstream payment provider, registered under the name `payments`. `POST /demo/payments/degrade`
/// and `/demo/payments/recover` change what its health check says.
final class PaymentsClient: HealthCheckable {
    private let degraded = Mutex(false)

    func healthCheck() async -> HealthStatus {
        degraded.withLock { $0 } ? .degraded(reason: "payment provider answers in 2.4 s") : .healthy
    }

    func setDegraded(_ value: Bool) { degraded.withLock { $0 = value } }
}

/// Made per request by a deliberately slow factory: every resolve is a slow resolution.
struct ReportBuilder: Sendable {
    let database: Database

    func report() -> String { "orders: \(database.orders().count)\n" }
}

/// A refund provider this build does not register: `/refunds` fails to resolve it.
struct RefundsClient: Sendable {}

/// A refund gateway whose factory always throws (`/refunds/gateway`).
struct RefundGateway: Sendable {
    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "refund gateway unreachable: connection refused (10.0.0.7:443)" }
    }
}

/// What the routes use, injected.
struct OrderService: Sendable {
    @Inject var database: Database?
    @Inject("payments") var payments: PaymentsClient?
}
