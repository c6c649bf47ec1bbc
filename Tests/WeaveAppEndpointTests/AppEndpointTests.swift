import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Testing
import WeaveAppEndpoint
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
import WeavePrometheus
import WeaveSupport
import WeaveTestSupport

private struct Degraded: HealthCheckable {
    func healthCheck() async -> HealthStatus { .degraded(reason: "secret reason") }
}

private final class Service1: Sendable {}

/// GET `path` over the Unix socket at `socketPath`; the whole response as text. The blocking reads
/// run on a thread of their own: on Swift Testing's two pool threads, two tests reading at once
/// would leave none for the endpoints they read from.
private func get(_ path: String, socketPath: String) async throws -> String {
    try await onThreadOfItsOwn { Result { try blockingGet(path, socketPath: socketPath) } }.get()
}

private func blockingGet(_ path: String, socketPath: String) throws -> String {
    let fd = try requestGet(path, socketPath: socketPath)
    defer { close(fd) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { break }
        response += buffer[0..<count]
    }
    return String(decoding: response, as: UTF8.self)
}

/// Connects to the Unix socket at `socketPath` and sends `GET path` (the connection closes after the
/// answer); returns the connected descriptor, for the caller to read and close.
private func requestGet(_ path: String, socketPath: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un(path: socketPath)!
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else {
        let error = POSIXError(POSIXErrorCode(rawValue: errno)!)
        close(fd)
        throw error
    }
    let request = "GET \(path) HTTP/1.1\r\nHost: app\r\nConnection: close\r\n\r\n"
    _ = request.withCString { send(fd, $0, strlen($0), 0) }
    return fd
}

/// Waits (up to 10 s) until `endpoint` listens and its first round of checks has run.
private func waitUntilServing(_ endpoint: AppEndpoint) async throws {
    var tries = 0
    while endpoint.boundListeners == nil || !endpoint.router.lifecycle.isStarted {
        tries += 1
        #expect(tries < 2_000, "the endpoint did not start")
        if tries >= 2_000 { break }
        try await Task.sleep(for: .milliseconds(5))
    }
}

@Suite struct AppEndpointTests {
    @Test func servesTheContainerAndItsChecksOnADiscoverableSocket() async throws {
        let directory = NSTemporaryDirectory() + "weave-apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let container = Container()
        container.register(Service1.self) { Service1() }
        container.register("payments", (any HealthCheckable).self, scope: .singleton) { Degraded() }
        _ = container.resolve(Service1.self)
        let endpoint = AppEndpoint(container: container,
                                   identity: ServiceIdentity(serviceID: "orders/v2", description: "orders", version: "1.2.3", instance: "host-a"),
                                   configuration: .init(socket: .discoverable(directory: directory)))
        let running = Task { try await endpoint.run() }
        let socketPath = directory + "/orders_v2.sock"
        try await waitUntilServing(endpoint)
        var status = stat()
        #expect(stat(socketPath, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o660)

        let metrics = try await get("/metrics", socketPath: socketPath)
        #expect(metrics.contains("weave_resolutions_total{dependency=\"Service1\"} 1"))
        #expect(metrics.contains("weave_health_status{check=\"payments\",state=\"degraded\"} 1"))
        #expect(metrics.contains("service_instance_id=\"host-a\""))
        #expect(metrics.contains("weave_build_info{version=\"1.2.3\","))

        let health = try await get("/health", socketPath: socketPath)
        #expect(health.contains("\"status\":\"warn\""))
        #expect(health.contains("\"serviceId\":\"orders/v2\""))
        #expect(health.contains("\"instance\":\"host-a\""))
        #expect(health.contains("secret reason"), "the private socket carries reasons to the daemon")
        let mounted = await endpoint.router.handle(HealthRequest(method: "GET", uri: "/health"))
        #expect(mounted.status == 200 && !String(buffer: mounted.body).contains("secret reason"),
                "routes mounted in the application's router are private unless the application opts in")

        running.cancel()
        _ = try? await running.value
        #expect(stat(socketPath, &status) == 0, "an endpoint cancelled, not shut down, leaves its socket: the daemon reads it as down")
        await #expect(throws: POSIXError(.ECONNREFUSED), "nobody listens on it") { try await get("/livez", socketPath: socketPath) }
    }

    /// One copy of each event in the journal: while its socket serves, the endpoint's container
    /// does not log its resolution errors itself (the daemon reads them from `/events` and writes
    /// them); `/events` has them, and the application logs them again once the socket is gone, or
    /// all along with `logsContainerEvents`.
    @Test func theContainerLogsItsEventsOnlyWhenNoDaemonReadsThem() async throws {
        for logsContainerEvents in [false, true] {
            let directory = NSTemporaryDirectory() + "weave-apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let records = LogRecords()
            let container = Container(instrumentation: Instrumentation(logger: records.logger))
            struct Down: Error {}
            container.register(Service1.self) { () throws -> Service1 in throw Down() }
            let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "orders", description: "", version: "1"),
                                       configuration: .init(socket: .discoverable(directory: directory), watchesMemoryPressure: false,
                                                            logsContainerEvents: logsContainerEvents))
            let group = ServiceGroup(services: [endpoint], logger: Logger(label: "test"))
            let running = Task { try await group.run() }
            try await waitUntilServing(endpoint)
            _ = try? container.resolveThrows(Service1.self)
            await container.instrumentation.flush()
            let logged = records.count(WeaveEvent.resolutionError.messageID)
            #expect(logged == (logsContainerEvents ? 1 : 0), "logsContainerEvents: \(logsContainerEvents)")
            var events = try await get("/events", socketPath: directory + "/orders.sock")
            while !events.contains("Service1") {
                try await Task.sleep(for: .milliseconds(5))
                events = try await get("/events", socketPath: directory + "/orders.sock")
            }
            #expect(events.contains("Service1"), "/events has the error")
            await group.triggerGracefulShutdown()
            try await running.value
            _ = try? container.resolveThrows(Service1.self)
            await container.instrumentation.flush()
            #expect(records.count(WeaveEvent.resolutionError.messageID) == logged + 1, "logged by the application once the socket is gone")
        }
    }

    /// What happens between the endpoint's creation and its socket serving (the application's
    /// startup, before `app.execute()`) is logged once (#65): by the daemon, from `/events`, when the
    /// socket serves; by the application, when it cannot.
    @Test func startupEventsAreLoggedOnceWhetherOrNotTheSocketServes() async throws {
        for serves in [true, false] {
            let base = NSTemporaryDirectory() + "weave-apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            defer { try? FileManager.default.removeItem(atPath: base) }
            // A directory under a file cannot be made: no socket.
            if !serves { FileManager.default.createFile(atPath: base, contents: Data()) }
            let directory = serves ? base : base + "/apps"
            let records = LogRecords()
            let container = Container(instrumentation: Instrumentation(logger: records.logger))
            struct Down: Error {}
            container.register(Service1.self) { () throws -> Service1 in throw Down() }
            let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "orders", description: "", version: "1"),
                                       configuration: .init(socket: .discoverable(directory: directory), watchesMemoryPressure: false))
            _ = try? container.resolveThrows(Service1.self) // startup, before the endpoint runs
            await container.instrumentation.flush()
            #expect(records.count(WeaveEvent.resolutionError.messageID) == 0, "held while the socket is not serving yet")
            let group = ServiceGroup(services: [endpoint], logger: Logger(label: "test"))
            let running = Task { try await group.run() }
            await eventually { endpoint.router.lifecycle.isStarted }
            if serves {
                try await waitUntilServing(endpoint)
                #expect(try await get("/events", socketPath: directory + "/orders.sock").contains("Service1"))
            }
            await container.instrumentation.flush()
            #expect(records.count(WeaveEvent.resolutionError.messageID) == (serves ? 0 : 1), "serves: \(serves)")
            await group.triggerGracefulShutdown()
            try await running.value
        }
    }

    /// Only a graceful shutdown (SIGTERM in a `ServiceGroup`) removes the socket: the application left.
    @Test func aGracefulShutdownRemovesTheSocket() async throws {
        let directory = NSTemporaryDirectory() + "weave-apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let endpoint = AppEndpoint(container: Container(), identity: ServiceIdentity(serviceID: "orders", description: "", version: "1"),
                                   configuration: .init(socket: .discoverable(directory: directory), watchesMemoryPressure: false))
        let group = ServiceGroup(services: [endpoint], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        try await waitUntilServing(endpoint)
        #expect(FileManager.default.fileExists(atPath: directory + "/orders.sock"))
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(!FileManager.default.fileExists(atPath: directory + "/orders.sock"))
    }

    @Test func anAnswerLargerThanTheDefaultSendBufferGoesOutAtOnce() async throws {
        // 150 services, each with its buckets (about 2 KB): an exposition of about 300 KB, above the
        // default 208 KiB send buffer of a Unix socket and below the 416 KiB the endpoint asks for on
        // a stock kernel.
        let directory = NSTemporaryDirectory() + "weave-apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let container = Container()
        for index in 0..<150 {
            container.register("service-\(index)", Service1.self) { Service1() }
            _ = container.resolve("service-\(index)", Service1.self)
        }
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "big", description: "", version: "1"),
                                   configuration: .init(socket: .discoverable(directory: directory), watchesMemoryPressure: false,
                                                        resolveBuckets: .all))
        let running = Task { try await endpoint.run() }
        defer { running.cancel() }
        try await waitUntilServing(endpoint)
        let length = try await get("/metrics", socketPath: directory + "/big.sock").utf8.count
        #expect(length > 240_000 && length < 400_000, "\(length) bytes")
        // Asked again and not read: the whole answer waits in the socket, written at once.
        let fd = try requestGet("/metrics", socketPath: directory + "/big.sock")
        defer { close(fd) }
        var queued: Int32 = 0
        for _ in 0..<400 {
            try await Task.sleep(for: .milliseconds(5))
            _ = ioctl(fd, UInt(FIONREAD), &queued)
            if Int(queued) >= length - 1_000 { break }
        }
        #expect(Int(queued) >= length - 1_000, "\(queued) of about \(length) bytes queued before the client read any")
    }

    /// A second instance under the same name does not take the first one's socket (before, it
    /// replaced the file, so the daemon saw only the second; and when the second stopped, it removed
    /// the file, so the daemon saw neither). It logs that it cannot listen and runs its checks.
    @Test func aSecondInstanceUnderTheSameNameLeavesTheFirstsSocketAlone() async throws {
        let directory = NSTemporaryDirectory() + "weave-apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func endpoint(_ instance: String) -> AppEndpoint {
            AppEndpoint(container: Container(), identity: ServiceIdentity(serviceID: "orders", description: "", version: "1", instance: instance),
                        configuration: .init(socket: .discoverable(directory: directory), watchesMemoryPressure: false))
        }
        let socketPath = directory + "/orders.sock"
        let first = endpoint("first")
        let firstGroup = ServiceGroup(services: [first], logger: Logger(label: "test"))
        let firstRunning = Task { try await firstGroup.run() }
        try await waitUntilServing(first)
        let second = endpoint("second")
        let secondRunning = Task { try await second.run() }
        await eventually { second.router.lifecycle.isStarted }
        #expect(second.router.lifecycle.isStarted && second.boundListeners == nil)
        #expect(try await get("/health", socketPath: socketPath).contains("\"instance\":\"first\""))

        secondRunning.cancel()
        _ = try? await secondRunning.value
        #expect(try await get("/health", socketPath: socketPath).contains("\"instance\":\"first\""),
                "the second instance's stop leaves the first's socket")
        await firstGroup.triggerGracefulShutdown()
        _ = try? await firstRunning.value
        #expect(!FileManager.default.fileExists(atPath: socketPath), "the first removes its own socket when it stops gracefully")
    }

    /// A socket file nobody listens on (a crashed instance's) is replaced; and a file that is no
    /// longer the socket the endpoint bound is not removed when it stops.
    @Test func aLeftoverSocketIsReplacedAndAnotherProcesssSocketIsNotRemoved() async throws {
        let directory = NSTemporaryDirectory() + "weave-apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/orders.sock"
        /// A socket bound at `socketPath`, listening or not.
        func bound(listening: Bool) -> Int32 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un(path: socketPath)!
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(status == 0 && (!listening || listen(fd, 4) == 0))
            return fd
        }
        close(bound(listening: false)) // the file stays; connecting to it is refused

        let endpoint = AppEndpoint(container: Container(), identity: ServiceIdentity(serviceID: "orders", description: "", version: "1"),
                                   configuration: .init(socket: .discoverable(directory: directory), watchesMemoryPressure: false))
        let running = Task { try await endpoint.run() }
        try await waitUntilServing(endpoint)
        #expect(try await get("/livez", socketPath: socketPath).hasPrefix("HTTP/1.1 200"))

        // Another process takes the name over while the endpoint runs.
        unlink(socketPath)
        let other = bound(listening: true)
        defer { close(other) }
        running.cancel()
        _ = try? await running.value
        #expect(FileManager.default.fileExists(atPath: socketPath), "the other process's socket stays")
    }

    @Test func socketNamesAreSafeFileNames() {
        #expect(AppEndpoint.Configuration.socketName("orders") == "orders")
        #expect(AppEndpoint.Configuration.socketName("../etc/passwd") == "_._etc_passwd")
        #expect(AppEndpoint.Configuration.socketName("") == "_")
        #expect(AppEndpoint.Configuration.socketName(".hidden") == "_hidden")
        #expect(AppEndpoint.Configuration.socketName(String(repeating: "é", count: 300)) == String(repeating: "_", count: 128))
        // Every name the endpoint makes is one the daemon discovers.
        for name in ["orders", "../etc/passwd", "", ".hidden", "a b\u{0}c", String(repeating: "x", count: 500), "ordérs", "-.-"] {
            #expect(AppSocket.isValidName(AppEndpoint.Configuration.socketName(name)), "\(name)")
        }
        #expect(!AppSocket.isValidName(String(repeating: "x", count: 129)) && !AppSocket.isValidName(".x") && !AppSocket.isValidName("a/b"))
    }

    @Test func detailsArePrivateWithoutListeners() {
        #expect(DetailsPolicy.default(for: []) == .never)
        #expect(DetailsPolicy.default(for: [.tcp(host: "127.0.0.1", port: 1)]) == .always)
    }
}

@Suite struct AppEndpointFailureTests {
    /// A directory the endpoint cannot make: the error is logged, the checks still run, and the
    /// service keeps running until it is stopped (observability never stops the application).
    @Test func aSocketThatCannotBeMadeDoesNotStopTheService() async throws {
        let file = NSTemporaryDirectory() + "weave-not-a-directory-\(getpid())"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let container = Container()
        container.register("payments", (any HealthCheckable).self, scope: .singleton) { Degraded() }
        let endpoint = AppEndpoint(container: container, identity: ServiceIdentity(serviceID: "orders", description: "", version: "1"),
                                   configuration: .init(socket: .discoverable(directory: file + "/apps"), watchesMemoryPressure: false))
        let running = Task { try await endpoint.run() }
        await eventually { endpoint.router.lifecycle.isStarted }
        #expect(endpoint.router.lifecycle.isStarted, "the first round ran")
        #expect(endpoint.monitor.latestReport.checks["payments"]?.status.state == .degraded)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!running.isCancelled)
        running.cancel()
        _ = try? await running.value
        #expect(FileManager.default.fileExists(atPath: file), "nothing it did not make is removed")
    }
}
