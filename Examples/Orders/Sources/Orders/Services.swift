import Glibc
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

/// The startup nest (`--startup-nest-ms`): a catalog made with its prices, made with the stock.
final class Inventory: Sendable {}

final class Pricing: Sendable {
    let inventory: Inventory
    init(inventory: Inventory) { self.inventory = inventory }
}

final class Catalog: Sendable {
    let pricing: Pricing
    init(pricing: Pricing) { self.pricing = pricing }
}

/// A nest factory's body: sleeps `milliseconds`, then makes what it makes (resolving the next), and
/// prints the times it measured itself, `nest Pricing total_ms=34.1 self_ms=10.1`: what the
/// integration tests hold the container's figures to.
func nestRun<T>(_ name: String, sleeping milliseconds: UInt32, make: () -> T) -> T {
    let start = ContinuousClock.now
    usleep(milliseconds * 1_000)
    let nested = ContinuousClock.now
    let made = make()
    let end = ContinuousClock.now
    let ms = { (duration: Duration) in Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1e3 }
    print("nest \(name) total_ms=\(ms(end - start)) self_ms=\(ms(nested - start))")
    fflush(nil)
    return made
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
