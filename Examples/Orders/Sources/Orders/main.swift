import Glibc
import Hummingbird
import Logging
import Metrics
import Prometheus
import WeaveAppEndpoint // the container, health checks, ServiceIdentity and the endpoint
import WeaveHummingbird
import WeaveSystemd

// Orders: a Hummingbird 2 service on WeaveDI, observed by weave-healthd.
//   Orders [--name NAME] [--port PORT] [--apps-dir DIR] [--slow-factory-ms MS] [--startup-nest-ms A,B,C]
// It serves its API on 127.0.0.1:PORT, and its container and health on DIR/NAME.sock (by default
// /run/weave/apps, where weave-healthd looks), and on its own router under /metrics, /health, /livez
// and /readyz.

var name = "orders"
var port = 8080
var appsDirectory = AppEndpoint.Configuration.defaultDirectory
var slowFactory = Duration.milliseconds(25)
var startupNest: [UInt32] = []
var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fatalError("\(option) needs a value; see the comment at the top of main.swift") }
    switch option {
    case "--name": name = value
    case "--port": port = Int(value) ?? port
    case "--apps-dir": appsDirectory = value
    case "--slow-factory-ms": slowFactory = .milliseconds(Int(value) ?? 25)
    case "--startup-nest-ms": startupNest = value.split(separator: ",").compactMap { UInt32($0) }
    default: fatalError("unknown option \(option)")
    }
}

// 1. Logs, and the container's slow-resolution, error and memory-pressure events, go to journald
//    under this service's own name (standard error when there is no journal).
let journal = JournalWriter()
LoggingSystem.bootstrap { [name] in JournalLogHandler(label: $0, identifier: name, target: .journal, writer: journal) }

// 2. The services, registered in the live container that UnifiedDI and @Inject use.
UnifiedDI.register(Database.self, scope: .singleton) { Database() }
UnifiedDI.register("payments", PaymentsClient.self, scope: .singleton) { PaymentsClient() }
UnifiedDI.register(ReportBuilder.self) { [slowFactory] in
    usleep(UInt32(slowFactory / .microseconds(1)))
    return ReportBuilder(database: UnifiedDI.requireResolve(Database.self))
}
// A factory that fails: its upstream is down. Each attempt is a resolution error (factory_failed),
// counted and logged at error level (rate-limited), never a resolve.
UnifiedDI.register(RefundGateway.self) { () throws -> RefundGateway in throw RefundGateway.Unreachable() }

// 3. The service's own metrics through swift-metrics into a swift-prometheus registry, with the
//    container's timings forwarded there too (MetricsBridge), as a service that already exports
//    with swift-prometheus does.
let registry = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
let bridge = MetricsBridge(container: .live)
let requests = Counter(label: "orders_requests_total")

// 4. The endpoint weave-healthd reads: one Service. The registry's families join the container's;
//    those the container owns (the bridge's copies) are left out, so no family appears twice.
let endpoint = AppEndpoint(container: .live,
                           identity: ServiceIdentity(serviceID: name, description: "orders API", version: "1.4.0",
                                                     instance: "127.0.0.1:\(port)"),
                           configuration: .init(socket: .discoverable(directory: appsDirectory)),
                           collectors: [ExpositionText(help: ["orders_requests": "Requests to /orders."]) { registry.emitToBuffer() }])

// A startup that resolves a nest of slow singletons (`--startup-nest-ms 5,10,20`): Catalog's factory
// makes Pricing, whose factory makes Inventory, each sleeping its share first. The status page draws
// it as a waterfall, and `weave-health why APP/Pricing` shows each run's total and self time.
// Resolved once the endpoint exists: its /events has the events from its creation on.
if startupNest.count == 3 {
    let (catalog, pricing, inventory) = (startupNest[0], startupNest[1], startupNest[2])
    UnifiedDI.register(Inventory.self, scope: .singleton) { nestRun("Inventory", sleeping: inventory) { Inventory() } }
    UnifiedDI.register(Pricing.self, scope: .singleton) {
        nestRun("Pricing", sleeping: pricing) { Pricing(inventory: UnifiedDI.requireResolve(Inventory.self)) }
    }
    UnifiedDI.register(Catalog.self, scope: .singleton) {
        nestRun("Catalog", sleeping: catalog) { Catalog(pricing: UnifiedDI.requireResolve(Pricing.self)) }
    }
    _ = UnifiedDI.requireResolve(Catalog.self)
}

let router = Router()
router.get("/orders") { _, _ in
    requests.increment()
    return OrderService().database?.orders().joined(separator: "\n") ?? "no database"
}
router.get("/report") { _, _ in UnifiedDI.requireResolve(ReportBuilder.self).report() }
// Refunds are not wired into this build: each request is a resolution error (weave_resolution_errors_total).
router.get("/refunds") { _, _ in
    UnifiedDI.resolve(RefundsClient.self) == nil ? Response(status: .notImplemented) : Response(status: .ok)
}
router.get("/refunds/gateway") { _, _ in
    (try? UnifiedDI.resolveThrows(RefundGateway.self)) == nil ? Response(status: .serviceUnavailable) : Response(status: .ok)
}
// What the memory-pressure monitor does when the kernel reports pressure.
router.post("/demo/memory-pressure") { _, _ in "dropped \(Container.live.relieveMemoryPressure()) cached instances\n" }
router.post("/demo/payments/degrade") { _, _ in OrderService().payments?.setDegraded(true); return "degraded\n" }
router.post("/demo/payments/recover") { _, _ in OrderService().payments?.setDegraded(false); return "recovered\n" }
// 5. The same endpoints in the service's own router (optional): all of them, as it listens on
// loopback only; on a public port, leave out `.all` to mount the probes alone.
router.addWeaveHealthRoutes(endpoint.router, .all)

let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                      services: [endpoint], logger: Logger(label: name))
try await app.runService()
journal.flush(timeout: .milliseconds(300)) // the last entries, before the process ends
