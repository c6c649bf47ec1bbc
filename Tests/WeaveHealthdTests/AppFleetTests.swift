import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing
@testable import WeaveHealthd
import WeaveAppEndpoint
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeavePrometheus
import WeaveSupport
import WeaveTestSupport

/// An HTTP response carrying `body`, an OpenMetrics exposition.
private func openMetricsResponse(_ body: String) -> String {
    "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
}

private final class Store: HealthCheckable {
    func healthCheck() async -> HealthStatus { .degraded(reason: "replica lag") }
}

/// Degraded while a test says so.
private final class Flip: HealthCheckable {
    let degraded: Locked<Bool>
    init(degraded: Locked<Bool>) { self.degraded = degraded }
    func healthCheck() async -> HealthStatus { degraded.withLock { $0 } ? .degraded(reason: "flipped") : .healthy }
}

@Suite struct AppsConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try ConfigurationLoader(file: "test.yaml", text: text).parse()
    }

    @Test func defaultsAndAFullSection() throws {
        #expect(try parse("checks: []\n").apps.directory == "/run/weave/apps")
        let apps = try parse("""
            apps:
              directory: /srv/apps
              timeout: 500ms
              budget: 3s
              health_interval: 2s
              max_scrape_bytes: 8388608
              targets:
                - {name: orders, socket: /run/orders/weave.sock}
                - {name: billing, url: "http://127.0.0.1:9400/weave/"}
            """).apps
        #expect(apps.directory == "/srv/apps" && apps.timeout == .milliseconds(500) && apps.budget == .seconds(3))
        #expect(apps.maxScrapeBytes == 8 << 20 && AppsConfiguration().maxScrapeBytes == 16 << 20)
        #expect(apps.targets == [
            AppTarget(name: "orders", address: .unix(path: "/run/orders/weave.sock"), host: "localhost", pathPrefix: ""),
            AppTarget(name: "billing", address: .tcp(host: "127.0.0.1", port: 9400), host: "127.0.0.1:9400", pathPrefix: "/weave"),
        ])
        #expect(try parse("apps: {discover: false}\n").apps.directory == nil)
        #expect(try apps.watch && !parse("apps: {watch: false}\n").apps.watch)
        #expect(throws: ConfigurationError.self) { try parse("apps: {watch: sometimes}\n") }
    }
}

/// The fleet against real application endpoints on Unix sockets, and against sockets that are not.
@Suite struct AppFleetTests {
    let directory = NSTemporaryDirectory() + "weave-fleet-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    /// An application's endpoint in a `ServiceGroup` of its own, as an application runs it: the
    /// group's graceful shutdown is its SIGTERM; cancelling the task is a failure elsewhere in it.
    private func startApp(_ name: String, container: Container = Container()) async throws -> (ServiceGroup, Task<Void, any Error>) {
        container.register("store", (any HealthCheckable).self, scope: .singleton) { Store() }
        _ = container.resolve("store", (any HealthCheckable).self)
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: name, description: "", version: "1"),
                                   configuration: .init(socket: .discoverable(directory: directory), watchesMemoryPressure: false))
        let group = ServiceGroup(services: [endpoint], logger: Logger(label: "test"))
        let task = Task { try await group.run() }
        await eventually { endpoint.boundListeners != nil && endpoint.router.lifecycle.isStarted }
        return (group, task)
    }

    /// A socket that accepts and then does what `behaviour` says, instead of HTTP, until `stop`.
    private func startImpostor(_ name: String, _ behaviour: @escaping @Sendable (Int32) -> Void) throws -> Int32 {
        let fd = listening(name)
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0, errno == EINTR { continue }
                if client < 0 {
                    // Closed here, not by the test: closed under this thread, its number could be
                    // reused by another test's socket before the next accept, which would take its clients.
                    close(fd)
                    return
                }
                behaviour(client)
            }
        }
        return fd
    }

    /// A listening socket `<name>.sock` in the directory, which no one accepts on: a connection to it
    /// succeeds (into its backlog) and is never answered.
    private func listening(_ name: String) -> Int32 {
        let path = directory + "/" + name + ".sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un(path: path)!
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(fd, 16) == 0)
        return fd
    }

    /// An application that answers every request on its connection with `body`, an OpenMetrics
    /// exposition, `delay` microseconds after it came; `accepted` counts its connections, `requests`
    /// its requests.
    private func startExposition(_ name: String, _ body: String, delay: useconds_t = 0, accepted: Locked<Int>? = nil,
                                 requests: Locked<Int>? = nil) throws -> Int32 {
        let response = openMetricsResponse(body)
        return try startImpostor(name) { client in
            accepted?.withLock { $0 += 1 }
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while recv(client, &buffer, buffer.count, 0) > 0 {
                requests?.withLock { $0 += 1 }
                if delay > 0 { usleep(delay) }
                _ = response.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            }
            close(client)
        }
    }

    /// Stops an impostor: connecting is refused from now on, and its thread closes the socket once
    /// `behaviour` has returned.
    private func stop(_ impostors: Int32...) {
        for fd in impostors { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    @Test func aggregatesAppsAndIsolatesTheBrokenOnes() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, orders) = try await startApp("orders")
        let (billingGroup, billing) = try await startApp("billing")
        let (_, payments) = try await startApp("payments")
        // A peer that is not HTTP, one that sends an endless body, one that never answers, and a killed app's socket.
        let garbage = try startImpostor("garbage") { client in
            _ = "SSH-2.0-OpenSSH_9.2\r\n".withCString { send(client, $0, strlen($0), 0) }
            close(client)
        }
        let huge = try startImpostor("huge") { client in
            var request = [UInt8](repeating: 0, count: 4_096)
            _ = recv(client, &request, request.count, 0)
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
            _ = head.withCString { send(client, $0, strlen($0), 0) }
            let chunk = [UInt8](repeating: UInt8(ascii: "#"), count: 65_536)
            while send(client, chunk, chunk.count, Int32(MSG_NOSIGNAL)) > 0 {}
            close(client)
        }
        let silent = try startImpostor("silent") { _ in }
        let deadFD = try startImpostor("killed") { client in close(client) }
        stop(deadFD) // the socket file stays; connecting is refused
        defer { stop(garbage, huge, silent) }

        let configuration = AppsConfiguration(directory: directory, timeout: .milliseconds(700), budget: .seconds(2),
                                              maxResponseBytes: 1 << 20)
        let clock = ManualClock()
        let fleet = AppFleet(configuration: configuration, group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16),
                             leavingGrace: .milliseconds(300), clock: ElapsedClock(clock))
        #expect(fleet.targets().map(\.name) == ["billing", "garbage", "huge", "killed", "orders", "payments", "silent"])

        let scrapes = await fleet.scrape() // returns although "silent" never answers: the budget bounds it
        let up = Dictionary(uniqueKeysWithValues: scrapes.map { ($0.target.name, $0.families != nil) })
        #expect(up == ["billing": true, "garbage": false, "huge": false, "killed": false, "orders": true, "payments": true, "silent": false])

        let text = String(decoding: Exposition.render(await DaemonExposition { fleet }.collect(), format: .prometheusText), as: UTF8.self)
        #expect(text.contains("weave_health_status{app=\"orders\",check=\"store\",state=\"degraded\"} 1"))
        #expect(text.contains("weave_health_status{app=\"billing\",check=\"store\",state=\"degraded\"} 1"))
        #expect(text.contains("weave_app_up{app=\"silent\"} 0") && text.contains("weave_app_up{app=\"orders\"} 1"))
        #expect(text.components(separatedBy: "# TYPE weave_health_status gauge").count == 2, "one family, both apps")

        await fleet.refreshHealth()
        let records = Dictionary(uniqueKeysWithValues: fleet.healthRecords().map { ($0.name, $0) })
        #expect(records["orders"]?.status.state == .degraded && records["orders/store"]?.status.state == .degraded)
        #expect(records["killed"]?.status.state == .unhealthy)
        #expect(records["killed"]?.status.reason?.contains("connection refused") == true, "\(records["killed"]?.status.reason ?? "")")
        #expect(records["garbage"]?.status.reason?.contains("not an HTTP response") == true, "\(records["garbage"]?.status.reason ?? "")")
        #expect(records["huge"]?.status.reason?.contains("larger than") == true, "\(records["huge"]?.status.reason ?? "")")
        #expect(records["silent"]?.status.reason?.contains("no complete response") == true, "\(records["silent"]?.status.reason ?? "")")

        // An application that stops gracefully removes its socket. Here its process (this test's)
        // runs on: it is not gone at once (a real one ends within the grace, and leaves), and after
        // the grace it is down, with the reason. (A real process ending is apps.sh's.)
        await billingGroup.triggerGracefulShutdown()
        _ = try? await billing.value
        // One that ends otherwise (cancelled because another service of its group failed) leaves
        // its socket: it is down, with the reason, not gone.
        payments.cancel()
        _ = try? await payments.value
        _ = await fleet.scrape()
        await fleet.refreshHealth()
        #expect(fleet.healthRecords().first { $0.name == "billing" }?.status.state == .degraded, "kept as it was, within the grace")
        clock.advance(by: .milliseconds(300))
        await fleet.refreshHealth()
        let removed = fleet.healthRecords().first { $0.name == "billing" }
        #expect(removed?.status.reason?.contains("was removed, but the process that served it (pid \(getpid())) still runs") == true,
                "\(removed?.status.reason ?? "no record")")
        let failed = fleet.healthRecords().first { $0.name == "payments" }
        #expect(failed?.status.state == .unhealthy && failed?.status.reason?.contains("connection refused") == true,
                "\(failed?.status.reason ?? "no record")")
        orders.cancel()
        _ = try? await orders.value
    }

    /// One connection per application carries its scrapes and health rounds (a new one costs the
    /// application about as much as rendering its metrics); a connection its peer closed between two
    /// requests is replaced without the application being reported down.
    @Test func reusesOneConnectionPerApplication() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let accepted = Locked<[String: Int]>([:])
        /// Answers each request on `client` with a one-series exposition; closes after the first if
        /// `once`; with `chatter`, says something unasked on the idle connection after each answer.
        @Sendable func serve(_ name: String, _ client: Int32, once: Bool, chatter: Bool = false, resetsSecond: Bool = false) {
            accepted.withLock { $0[name, default: 0] += 1 }
            var answered = 0
            let response = openMetricsResponse("# TYPE up gauge\nup 1\n# EOF\n")
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = recv(client, &buffer, buffer.count, 0)
                if count <= 0 { break }
                pending += buffer[..<count]
                while let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                    pending.removeSubrange(..<end.upperBound)
                    if resetsSecond, answered == 1 {
                        // Its idle timeout racing the request: reset (SO_LINGER 0) before any byte.
                        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                        setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                        close(client)
                        return
                    }
                    answered += 1
                    _ = response.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                    if once { close(client); return }
                    if chatter {
                        usleep(20_000)
                        _ = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno".withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                    }
                }
            }
            close(client)
        }
        let keeper = try startImpostor("keeper") { serve("keeper", $0, once: false) }
        let closer = try startImpostor("closer") { serve("closer", $0, once: true) }
        // Its unasked answer closes the idle connection: the next scrape connects afresh, and is not
        // the unasked answer taken for its own.
        let chatter = try startImpostor("chatter") { serve("chatter", $0, once: false, chatter: true) }
        // Resets a kept connection when asked again: up each time, asked again on a new one.
        let resetter = try startImpostor("resetter") { serve("resetter", $0, once: false, resetsSecond: true) }
        defer { stop(keeper, closer, chatter, resetter) }

        // Generous clocks: other tests may hold the cooperative pool's threads for seconds (this test counts connections).
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(30), budget: .seconds(60)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16))
        for _ in 0..<3 {
            let up = Dictionary(uniqueKeysWithValues: await fleet.scrape().map { ($0.target.name, $0.families != nil) })
            #expect(up == ["chatter": true, "closer": true, "keeper": true, "resetter": true])
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(accepted.withLock { $0 } == ["chatter": 3, "closer": 3, "keeper": 1, "resetter": 3])
    }

    /// More applications than the pool may keep: the others are connected per request, and every
    /// one is up. Three scrapes of three applications with room for one kept connection: three
    /// connections, then two new ones per scrape.
    @Test func keepsNoMoreConnectionsThanItsCapacity() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let accepted = Locked(0)
        let listeners = try ["a", "b", "c"].map { try startExposition($0, "# TYPE up gauge\nup 1\n# EOF\n", accepted: accepted) }
        defer { for fd in listeners { stop(fd) } }

        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(30), budget: .seconds(60)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 1))
        for _ in 0..<3 {
            #expect(await fleet.scrape().allSatisfy { $0.families != nil })
        }
        #expect(accepted.withLock { $0 } == 7)
    }

    /// A link in the directory to the daemon's own socket is not an application: before, every
    /// `/metrics` waited on itself until its timeout, and `/health` listed `self/self/self/…`.
    @Test func theDaemonsOwnSocketIsNotAnApplication() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let elsewhere = directory + "-own"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let own = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un(path: elsewhere + "/weave-healthd.sock")!
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(own, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        defer { close(own) }
        try FileManager.default.createSymbolicLink(atPath: directory + "/self.sock", withDestinationPath: elsewhere + "/weave-healthd.sock")
        let app = listening("orders")
        defer { close(app) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory), group: MultiThreadedEventLoopGroup.singleton,
                             connections: ConnectionPool(capacity: 4), ownSockets: [elsewhere + "/weave-healthd.sock"])
        #expect(fleet.targets().map(\.name) == ["orders"])
        let unaware = AppFleet(configuration: AppsConfiguration(directory: directory), group: MultiThreadedEventLoopGroup.singleton,
                               connections: ConnectionPool(capacity: 4))
        #expect(unaware.targets().map(\.name) == ["orders", "self"], "the link is a socket like any other to a fleet not told")
    }

    /// A stopped application is a target by its name alone; a socket another user puts at its path
    /// is not its return. Every request passes the same admission as the listing (#64: the stopped
    /// path was fetched whenever something was at it, and served the forgery as the application).
    @Test(.enabled(if: getuid() == 0, "a socket of another user: chown needs root"))
    func aSocketPlantedAtAStoppedApplicationsPathIsNotServed() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let owners = AppOwners(), lifecycle = AppLifecycle()
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory), group: MultiThreadedEventLoopGroup.singleton,
                             connections: ConnectionPool(capacity: 4), owners: owners, lifecycle: lifecycle)
        let real = try startExposition("orders", "# TYPE orders counter\norders_total 1\n# EOF\n")
        #expect(await fleet.scrape().map { "\($0.target.name) \($0.families != nil)" } == ["orders true"], "bound to root, its first owner")
        // Stopped while its unit stays enabled (as forgetAllBut finds it), its socket removed.
        stop(real)
        unlink(directory + "/orders.sock")
        lifecycle.stop(AppTarget(name: "orders", address: .unix(path: directory + "/orders.sock"), host: "localhost", pathPrefix: "",
                                 unit: "orders.service"))
        let forged = try startExposition("orders", "# TYPE forged counter\nforged_total 1\n# EOF\n")
        defer { stop(forged) }
        #expect(chown(directory + "/orders.sock", 4_242, 4_242) == 0)
        for _ in 0..<3 {
            let scrapes = await fleet.scrape()
            #expect(scrapes.map(\.target.name) == ["orders"] && scrapes[0].families == nil, "down, not served")
        }
        let text = String(decoding: Exposition.render(await DaemonExposition { fleet }.collect(), format: .prometheusText), as: UTF8.self)
        #expect(!text.contains("forged_total") && text.contains("weave_app_up{app=\"orders\"} 0"))
        #expect(owners.family().samples.first { $0.labels[0].1 == "owner" }?.value == 1, "refused, counted with reason=\"owner\"")
        #expect(fleet.healthRecords().first { $0.name == "orders" }?.status.reason?.contains("the socket now at its path is not its owner's") == true)
        #expect(lifecycle.isStopped("orders"), "still stopped: a forgery is not its return")
    }

    /// An application's family named as the daemon's own keeps neither their help nor their type:
    /// before, an application's `weave_app_up` counter left the daemon's gauge out of the exposition.
    /// Such a family is the daemon's alone: the application's is dropped, counted and not served.
    @Test func anApplicationCannotReplaceTheDaemonsOwnFamilies() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = try startExposition("counter", "# TYPE weave_app_up counter\nweave_app_up_total 5\n# EOF\n")
        let helpless = try startExposition("helpless", "# TYPE weave_app_scrape_duration_seconds gauge\nweave_app_scrape_duration_seconds 9\n# EOF\n")
        defer { stop(counter, helpless) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(30), budget: .seconds(60)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16))
        let text = String(decoding: Exposition.render(await DaemonExposition { fleet }.collect(), format: .prometheusText), as: UTF8.self)
        #expect(text.contains("# HELP weave_app_up Whether the application's endpoint answered"))
        #expect(text.contains("# TYPE weave_app_up gauge\nweave_app_up{app=\"counter\"} 1\nweave_app_up{app=\"helpless\"} 1\n"))
        #expect(text.contains("# HELP weave_app_scrape_duration_seconds How long reading"))
        #expect(!text.contains("weave_app_scrape_duration_seconds{app=\"helpless\"} 9\n"), "not even of the same type")
        #expect(!text.contains("weave_app_up_total"))
        #expect(text.contains("weave_app_dropped_families_total{app=\"counter\",reason=\"reserved\"} 1\n"))
        #expect(text.contains("weave_app_dropped_families_total{app=\"helpless\",reason=\"reserved\"} 1\n"))
    }

    /// What the daemon shows of an application's checks is dated by the application (#65): "checked"
    /// is when its check ran (its `time`), not when the daemon read it; a down application's state
    /// began when the daemon's request found it down, never before, and its reason does not alternate.
    @Test func checksAreDatedByTheApplicationAndADownOneByTheReadThatFoundIt() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = WallClock.now()
        let ran = (now - 7.5).rounded(.down), began = (now - 60).rounded(.down)
        let health = #"{"status":"fail","checks":{"db:status":[{"status":"fail","output":"refused","#
            + #""time":"\#(Timestamp.rfc3339(ran))","changedAt":"\#(Timestamp.rfc3339(began))"}]}}"#
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/health+json\r\nContent-Length: \(health.utf8.count)\r\n\r\n" + health
        // Once broken, it answers /health with bytes that are not HTTP; /metrics is never an exposition:
        // two endpoints failing with two reasons.
        let broken = Locked(false)
        let app = try startImpostor("dated") { client in
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while case let count = recv(client, &buffer, buffer.count, 0), count > 0 {
                let asksHealth = String(decoding: buffer[..<count], as: UTF8.self).hasPrefix("GET /health")
                let reply = broken.withLock { $0 } && asksHealth ? "garbage\r\n\r\n" : answer
                _ = reply.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            }
            close(client)
        }
        defer { stop(app) }
        // Clocks of seconds, and rounds until it is read: other tests may hold the cooperative pool's threads.
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(10), budget: .seconds(30)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 4))
        while !fleet.healthRecords().contains(where: { $0.name == "dated/db" }) { await fleet.refreshHealth() }
        var records = Dictionary(uniqueKeysWithValues: fleet.healthRecords().map { ($0.name, $0) })
        let db = try #require(records["dated/db"])
        #expect(db.checkedAt == ran && db.changedAt == began)
        #expect(records["dated"]?.checkedAt == ran && records["dated"]?.changedAt == began)

        let stopped = WallClock.now()
        broken.withLock { $0 = true }
        while fleet.healthRecords().first(where: { $0.name == "dated" })?.status.reason?.hasPrefix("dated is down") != true {
            await fleet.refreshHealth()
        }
        records = Dictionary(uniqueKeysWithValues: fleet.healthRecords().map { ($0.name, $0) })
        let down = try #require(records["dated"])
        #expect(down.status.state == .unhealthy && down.changedAt >= stopped && down.checkedAt >= down.changedAt)
        #expect(records["dated/db"]?.changedAt == down.changedAt)
        _ = await fleet.scrape()
        await fleet.refreshHealth()
        let later = try #require(fleet.healthRecords().first { $0.name == "dated" })
        #expect(later.changedAt == down.changedAt && later.checkedAt >= down.checkedAt)
        #expect(later.status.reason == down.status.reason, "one reason, not alternating: \(later.status.reason ?? "")")
    }

    /// A scrape that shows an application's check in a state its last `/health` did not have brings
    /// that application's read forward, once per `health_interval`, and no other's (#66): a liar,
    /// whose `/metrics` and `/health` always disagree, asked for an early read of everyone at every
    /// scrape (39 applications' reads went from 1.1/s to 12.8/s).
    @Test func aDisagreementBringsForwardOnlyItsOwnRead() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func app(_ name: String, metricsState: String) throws -> Int32 {
            let health = #"{"status":"pass","checks":{"db:status":[{"status":"pass"}]}}"#
            let metrics = "# TYPE weave_health_status gauge\nweave_health_status{check=\"db\",state=\"\(metricsState)\"} 1\n# EOF\n"
            let answers = ["GET /health": "HTTP/1.1 200 OK\r\nContent-Type: application/health+json\r\nContent-Length: \(health.utf8.count)\r\n\r\n" + health,
                           "GET /metrics": openMetricsResponse(metrics)]
            return try startImpostor(name) { client in
                var buffer = [UInt8](repeating: 0, count: 4_096)
                while case let count = recv(client, &buffer, buffer.count, 0), count > 0 {
                    let request = String(decoding: buffer[..<count], as: UTF8.self)
                    let reply = answers.first { request.hasPrefix($0.key) }?.value ?? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
                    _ = reply.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                }
                close(client)
            }
        }
        let honest = try app("honest", metricsState: "healthy"), liar = try app("liar", metricsState: "unhealthy")
        defer { stop(honest, liar) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(10), budget: .seconds(30),
                                                              healthInterval: .seconds(3_600)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 4))
        while fleet.healthRecords().filter({ $0.name.hasSuffix("/db") }).count < 2 { await fleet.refreshHealth() }
        _ = await fleet.scrape()
        #expect(fleet.takeHealthStale() == ["liar"], "the liar's own read, not the honest one's")
        #expect(await fleet.refreshHealth(only: ["liar"]) == 1)
        for _ in 0..<5 { _ = await fleet.scrape() }
        #expect(fleet.takeHealthStale().isEmpty, "once per health_interval")
    }

    /// Applications that hang cannot starve the others: each request has its share of what is left
    /// of the budget (here 60 sockets that never answer, first by name, and 16 requests at once:
    /// four waves of 1.5 s in a budget of 6 s), so even the first scrape, in name order, reaches the healthy
    /// application; at the next, those that failed when last asked for `/metrics` go after it. An
    /// application's answers to `/health` do not move it up for `/metrics`: 20 sockets that answer
    /// `/health` and hang `/metrics` are asked after it too. (Clocks of seconds: other tests may hold
    /// the cooperative pool's threads, and the scrape's tasks start on them.)
    @Test func applicationsThatHangAreAskedAfterTheOthers() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let hanging = (0..<40).map { listening("a-hanging-\($0 < 10 ? "0" : "")\($0)") }
        defer { for fd in hanging { close(fd) } }
        let health = #"{"status":"pass","checks":{}}"#
        let healthAnswer = "HTTP/1.1 200 OK\r\nContent-Type: application/health+json\r\nContent-Length: \(health.utf8.count)\r\n\r\n" + health
        let halfHanging = try (0..<20).map { index in
            try startImpostor("b-health-only-\(index < 10 ? "0" : "")\(index)") { client in
                var buffer = [UInt8](repeating: 0, count: 4_096)
                while case let count = recv(client, &buffer, buffer.count, 0), count > 0 {
                    // /health is answered; /metrics never is (the connection is held until the test ends).
                    guard String(decoding: buffer[..<count], as: UTF8.self).hasPrefix("GET /health") else { continue }
                    _ = healthAnswer.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                }
                close(client)
            }
        }
        defer { for fd in halfHanging { stop(fd) } }
        let healthy = try startExposition("z-healthy", "# TYPE up gauge\nup 1\n# EOF\n")
        defer { stop(healthy) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(2), budget: .seconds(6)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 100))
        #expect(await fleet.refreshHealth() == 61)
        let first = await fleet.scrape()
        #expect(first.count == 61 && first.last?.target.name == "z-healthy" && first.last?.families != nil,
                "asked last, in name order, the healthy application is reached within the budget")
        let second = await fleet.scrape()
        #expect(second.last?.target.name == "z-healthy" && second.last?.families != nil)
        #expect(second.filter { $0.families != nil }.count == 1)
    }

    /// Stale sockets (bound, closed, left in the directory) are refused at once, and so take no
    /// share of the budget from the others: beside 800 of them, named to be asked first, an
    /// application that takes 300 ms to answer is up at every scrape. Before, once they had failed,
    /// they still counted in every request's share: 10 s over 51 waves, 196 ms (#64).
    @Test func staleSocketsTakeNoShareOfTheBudget() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for index in 0..<800 { close(listening("a-stale-\(1_000 + index)")) }
        let slow = try startExposition("z-slow", "# TYPE up gauge\nup 1\n# EOF\n", delay: 300_000)
        defer { stop(slow) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(10), budget: .seconds(10)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16))
        for scrape in 0..<5 {
            let up = await fleet.scrape().filter { $0.families != nil }.map(\.target.name)
            #expect(up == ["z-slow"], "scrape \(scrape)")
        }
    }

    /// A round judges what left by the directory as it is when the round ends, not as it was when it
    /// began: an application that came during a slow round, and that another round found, has not
    /// left. Before, the slow round forgot it ("left"), and with it which stale sockets had failed,
    /// so the next round gave the newcomer a share of the budget as if every stale socket could take
    /// its time: 4,096 of them, 19 ms (the nspawn test's "gamma left", then "gamma is down").
    @Test func anApplicationThatCameDuringASlowRoundHasNotLeft() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let exposition = "# TYPE up gauge\nup 1\n# EOF\n"
        let slow = try startExposition("a-slow", exposition, delay: 1_000_000)
        defer { stop(slow) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(10), budget: .seconds(10)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16))
        async let first = fleet.scrape()
        await eventually { fleet.directory?.found.isEmpty == false } // the slow round has listed the directory
        let newcomer = try startExposition("b-new", exposition)
        defer { stop(newcomer) }
        #expect(await fleet.refreshHealth(only: ["b-new"]) == 1)
        #expect(fleet.states.withLock { $0["b-new"] } != nil, "noted by the round that found it")
        let slowRound = await first
        #expect(slowRound.map(\.target.name) == ["a-slow"], "the slow round began before b-new came")
        #expect(fleet.states.withLock { $0["b-new"] } != nil, "not forgotten by the slow round")
    }

    /// What is refused at once takes no share of the budget: a stale socket nobody listens on, a
    /// socket file gone, and one whose mode does not let the daemon write to it (another user's
    /// stale socket: EACCES, which the nspawn test's 4,096 sockets of uid 2001 give the daemon's
    /// user; counted as slow, they cut gamma's share to 19 ms at every round). Root, which runs
    /// these tests, is never denied, so the classification is tested here, and the effect there.
    @Test func aSocketRefusedAtOnceIsRefused() {
        for code in [ECONNREFUSED, ENOENT, EACCES] {
            #expect(NetworkFailure.isRefused(IOError(errnoCode: code, reason: "connect")), "errno \(code)")
        }
        #expect(!NetworkFailure.isRefused(IOError(errnoCode: ETIMEDOUT, reason: "connect")))
        #expect(!NetworkFailure.isRefused(ChannelError.connectTimeout(.seconds(1))))
    }

    /// Applications that hang `/events` cannot hold back another's events: once they failed, a
    /// round waits only for those that answered when last asked, and asks the others apart. The 40
    /// fail at once in the first round, then hang; with a timeout of a minute, a second round that
    /// waited for them would take it, and count them.
    @Test func applicationsThatHangEventsDoNotHoldBackTheOthers() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let hang = Atomic<Bool>(false), release = Atomic<Bool>(false), held = Atomic<Int>(0)
        let hanging = try (0..<40).map { index in
            try startImpostor("a-hanging-\(index < 10 ? "0" : "")\(index)") { client in
                if hang.load(ordering: .relaxed) {
                    held.add(1, ordering: .relaxed)
                    while !release.load(ordering: .relaxed) { usleep(5_000) }
                }
                close(client)
            }
        }
        defer { for fd in hanging { stop(fd) } }
        struct Down: Error {}
        let container = Container()
        container.register(Double.self, throwingFactory: { throw Down() })
        let (_, app) = try await startApp("z-app", container: container)
        defer { app.cancel() }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(60), budget: .seconds(60)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 100))
        #expect(await fleet.refreshEvents() == 41, "the first round waits for every one")
        hang.store(true, ordering: .relaxed)
        let before = fleet.events.after("z-app")
        _ = try? container.resolveThrows(Double.self)
        #expect(await fleet.refreshEvents() == 1, "only the application that answered when last asked is awaited")
        #expect(fleet.events.after("z-app") > before, "its resolution error read")
        await eventually { held.load(ordering: .relaxed) > 0 } // asked apart, and hanging
        release.store(true, ordering: .relaxed)
    }

    /// What a scrape keeps of all the applications' answers is bounded: an answer that arrives when
    /// `maxScrapeBytes` is used up is down for this scrape, with the reason, and the others are kept.
    @Test func theApplicationsAnswersAreKeptUpToTheScrapesLimit() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // About 60 KB each, 90 KB relabelled: room for two of the three.
        let body = "# TYPE g gauge\n" + (0..<4_000).map { "g{i=\"\($0)\"} 1\n" }.joined() + "# EOF\n"
        let relabelled = try ExpositionParser.parse(Array(body.utf8), adding: [("app", "a")]).reduce(0) { $0 + $1.preformatted.count }
        let listeners = try ["a", "b", "c"].map { try startExposition($0, body) }
        defer { for fd in listeners { stop(fd) } }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(30), budget: .seconds(60),
                                                              maxResponseBytes: 4_096 * 16, maxScrapeBytes: relabelled * 5 / 2),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16))
        for _ in 0..<2 {
            let scrape = await fleet.scrape()
            #expect(scrape.filter { $0.families != nil }.count == 2)
        }
        let down = fleet.healthRecords().filter { $0.status.state == .unhealthy }
        #expect(down.count == 1)
        #expect(down.first?.status.reason?.contains("does not fit in what is left of apps: max_scrape_bytes") == true, "\(down)")
    }

    /// Scrapes asked at once share one reading of the applications (and one scrape's memory).
    @Test func scrapesAskedAtOnceShareOneReading() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let requests = Locked(0)
        let slow = try startExposition("slow", "# TYPE up gauge\nup 1\n# EOF\n", delay: 300_000, requests: requests)
        defer { stop(slow) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(30), budget: .seconds(60)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16))
        async let first = fleet.scrape()
        async let second = fleet.scrape()
        let (one, two) = await (first, second)
        #expect(one.first?.families != nil && two.first?.families != nil)
        #expect(requests.withLock { $0 } == 1)
        _ = await fleet.scrape()
        #expect(requests.withLock { $0 } == 2, "a scrape after the shared one reads the applications again")
    }

    /// At most `capacity` applications are watched (each holds a descriptor); the rest are polled,
    /// and one that leaves has its watch cancelled, making room for another.
    @Test func watchesAreBoundedAndEndWhenTheirApplicationLeaves() async {
        let watches = AppWatches(capacity: 2)
        let started = Locked<[String]>([])
        let tasks = Locked<[String: Task<Void, Never>]>([:])
        @Sendable func start(_ name: String, _ id: Int) -> Task<Void, Never> {
            started.withLock { $0.append(name) }
            let task = Task { _ = try? await Task.sleep(for: .seconds(3_600)) }
            tasks.withLock { $0[name] = task }
            return task
        }
        watches.update(["a", "b", "c"], start: start)
        #expect(started.withLock { $0 } == ["a", "b"])
        watches.update(["b", "c"], start: start)
        #expect(started.withLock { $0 } == ["a", "b", "c"])
        #expect(tasks.withLock { $0["a"]! }.isCancelled && !tasks.withLock { $0["b"]! }.isCancelled)
        watches.setWatching("b", true)
        watches.setWatching("a", true) // gone: no effect
        #expect(watches.watched() == ["b"])
        // A watch that ended by itself (its application left between rounds) is forgotten, so the
        // next round starts another; an older watch's end forgets nothing.
        watches.ended("b", id: 1)
        #expect(watches.watched() == ["b"])
        watches.ended("b", id: 2)
        #expect(watches.watched().isEmpty)
        watches.update(["b", "c"], start: start)
        #expect(started.withLock { $0 } == ["a", "b", "c", "b"])
        watches.stopAll()
        #expect(tasks.withLock { $0.values.allSatisfy(\.isCancelled) } && watches.watched().isEmpty)
    }

    /// A watched application's transition reaches the daemon's records without a round: its
    /// `health_interval` is an hour, so only the watch can bring it (#67). An application whose
    /// `/events` answers without `X-Weave-Index` (a plain exposition here) is not watched: it is polled.
    @Test func aWatchedApplicationsTransitionNeedsNoRound() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let degraded = Locked(false)
        let container = Container()
        container.register("flip", (any HealthCheckable).self, scope: .singleton) { Flip(degraded: degraded) }
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "flipper", description: "", version: "1"),
                                   configuration: .init(socket: .discoverable(directory: directory),
                                                        healthCheckDefaults: HealthCheckSettings(interval: .milliseconds(100)),
                                                        watchesMemoryPressure: false))
        let app = ServiceGroup(services: [endpoint], logger: Logger(label: "test"))
        let serving = Task { try await app.run() }
        await eventually { endpoint.boundListeners != nil && endpoint.router.lifecycle.isStarted }
        let plain = try startExposition("plain", "# EOF\n")
        defer { stop(plain) }
        let configuration = try ConfigurationLoader(file: "test.yaml", text: "apps: {directory: \(directory), health_interval: 1h, timeout: 20s, budget: 30s}\n").parse()
        let watches = AppWatches(capacity: 16)
        let source = DaemonSource(await Runtime(configuration: configuration, shared: DaemonShared(
            group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16), blocking: BlockingCalls(), watches: watches)))
        await source.runtime.apps.refreshHealth() // the daemon's first read, as MonitorService makes it
        let daemon = Task { try await AppHealthService(source: source).run() }
        func within(_ seconds: Int, _ condition: () -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            return condition()
        }
        func state(_ name: String) -> HealthState? { source.runtime.apps.healthRecords().first { $0.name == name }?.status.state }
        #expect(await within(120) { watches.watched() == ["flipper"] && state("flipper/flip") == .healthy })
        degraded.withLock { $0 = true }
        #expect(await within(120) { state("flipper/flip") == .degraded }, "the transition came with no round")
        degraded.withLock { $0 = false }
        #expect(await within(120) { state("flipper/flip") == .healthy })
        #expect(watches.watched() == ["flipper"], "the plain application is polled")
        daemon.cancel()
        _ = await daemon.result
        await app.triggerGracefulShutdown()
        _ = await serving.result
    }

    /// An application whose every watch answer has a new health transition (a flapping check, or a
    /// hostile one) is read no more often than a polled one: its `/health` at most once a
    /// second, not at every answer (50 a second before the bound).
    @Test func aTransitionAtEveryAnswerIsReadOnceASecond() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = ContainerEventLog(capacity: 8)
        let healthReads = Locked(0), watchAnswers = Locked(0)
        let health = #"{"status":"pass","checks":{"db:status":[{"status":"pass"}]}}"#
        // Each connection on a thread of its own: the watch holds one while /health is read on another.
        let flapping = try startImpostor("flapping") { client in Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while case let count = recv(client, &buffer, buffer.count, 0), count > 0 {
                let request = String(decoding: buffer[..<count], as: UTF8.self)
                let reply: String
                if request.hasPrefix("GET /events") {
                    watchAnswers.withLock { $0 += 1 }
                    log.append(.healthTransition, ["check": "db", "state_from": "healthy", "state_to": "degraded"])
                    let page = log.json(after: 0, limit: 256)
                    reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Weave-Index: \(log.newest)\r\n"
                        + "Content-Length: \(page.utf8.count)\r\n\r\n" + page
                } else if request.hasPrefix("GET /health") {
                    healthReads.withLock { $0 += 1 }
                    reply = "HTTP/1.1 200 OK\r\nContent-Type: application/health+json\r\nContent-Length: \(health.utf8.count)\r\n\r\n" + health
                } else {
                    reply = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
                }
                _ = reply.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            }
            close(client)
        } }
        defer { stop(flapping) }
        let configuration = try ConfigurationLoader(file: "test.yaml", text: "apps: {directory: \(directory), health_interval: 1s}\n").parse()
        let watches = AppWatches(capacity: 16)
        let source = DaemonSource(await Runtime(configuration: configuration, shared: DaemonShared(
            group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16), blocking: BlockingCalls(), watches: watches)))
        await source.runtime.apps.refreshHealth()
        let daemon = Task { try await AppHealthService(source: source).run() }
        await eventually { watchAnswers.withLock { $0 } >= 2 }
        let clock = ContinuousClock()
        let (start, readsBefore) = (clock.now, healthReads.withLock { $0 })
        try await Task.sleep(for: .seconds(3))
        let (elapsed, reads, watched) = (clock.now - start, healthReads.withLock { $0 } - readsBefore, watches.watched())
        daemon.cancel()
        _ = await daemon.result
        #expect(watched == ["flapping"])
        // One read per health interval of the time, one more for a read under way at either end.
        #expect(reads <= Int(elapsed.components.seconds) + 2, "\(reads) reads of /health in \(elapsed)")
    }

    /// A directory that cannot be listed is not an empty one: the applications it last held stay
    /// (and are reported down if they are gone); a directory that does not exist holds none.
    @Test func aDirectoryThatCannotBeListedKeepsItsLastApplications() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let moved = directory + ".moved"
        defer { for path in [directory, moved] { try? FileManager.default.removeItem(atPath: path) } }
        let listeners = try ["orders", "billing"].map { try startImpostor($0) { close($0) } }
        defer { for fd in listeners { stop(fd) } }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory), group: MultiThreadedEventLoopGroup.singleton,
                             connections: ConnectionPool(capacity: 16))
        #expect(fleet.targets().map(\.name) == ["billing", "orders"])

        // A file where the directory was: opendir fails (ENOTDIR), as it would out of descriptors.
        try FileManager.default.moveItem(atPath: directory, toPath: moved)
        #expect(FileManager.default.createFile(atPath: directory, contents: Data("not a directory".utf8)))
        #expect(fleet.targets().map(\.name) == ["billing", "orders"])

        try FileManager.default.removeItem(atPath: directory)
        #expect(fleet.targets().isEmpty)
    }
}

@Suite struct DescriptorBudgetTests {
    @Test func theServerAndTheKeptConnectionsShareWhatTheReserveLeaves() {
        let shipped = DescriptorBudget(limit: 1_024)
        #expect(shipped.serverConnections(wanted: 512) == 512)
        #expect(shipped.keptAppConnections(serverConnections: 512) == 1_024 - 256 - 512 - AppFleet.maxConcurrentRequests)
        let small = DescriptorBudget(limit: 512)
        #expect(small.serverConnections(wanted: 512) == 256)
        #expect(small.keptAppConnections(serverConnections: 256) == 0)
        #expect(DescriptorBudget(limit: 100).serverConnections(wanted: 512) == DescriptorBudget.minimumServerConnections)
        let unlimited = DescriptorBudget(limit: nil)
        #expect(unlimited.serverConnections(wanted: 512) == 512 && unlimited.keptAppConnections(serverConnections: 512) == .max)
    }
}
