#if canImport(Glibc)
import Glibc
#endif
import Logging
import ServiceLifecycle
import Testing
import WeaveDI
import WeaveSupport
@testable import WeaveMemoryPressure
import WeaveTestSupport

private final class CachedThing: Sendable {}

@Suite struct MemoryPressureTests {
    private func temporaryPath(_ name: String) -> String {
        "/tmp/weavedi-\(getpid())-\(name)-\(UInt32.random(in: 0...UInt32.max))"
    }

    @Test func fifoNamedByMemoryPressureWatchEvictsCachedAndCallsHandlers() async throws {
        let fifo = temporaryPath("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let container = Container()
        container.register(CachedThing.self, scope: .cached) { CachedThing() }
        let first = container.resolve(CachedThing.self)
        var configuration = MemoryPressureConfiguration()
        configuration.environment = ["MEMORY_PRESSURE_WATCH": fifo]
        let monitor = MemoryPressureMonitor(configuration: configuration) { container.relieveMemoryPressure() }
        let events = Locked<[MemoryPressureEvent]>([])
        monitor.onPressure { event in events.withLock { $0.append(event) } }
        let relieved = Locked(0)
        container.instrumentation.onMemoryPressure { relieved.withLock { $0 += 1 } }
        // Another container's handlers hear nothing: the monitor relieves only its own containers.
        let other = Container()
        let otherRelieved = Locked(0)
        other.instrumentation.onMemoryPressure { otherRelieved.withLock { $0 += 1 } }
        #expect(monitor.start() == .systemdWatch(path: fifo))
        defer { monitor.stop() }

        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0)
        var byte: UInt8 = 1
        #expect(write(writer, &byte, 1) == 1)
        close(writer)

        // The assertion is on what arrives, not when (a busy or sanitized run is slow).
        await eventually { !events.withLock { $0.isEmpty } }
        await container.instrumentation.flush()
        await other.instrumentation.flush()
        #expect(relieved.withLock { $0 } == 1)
        #expect(otherRelieved.withLock { $0 } == 0)
        let event = try #require(events.withLock { $0.first })
        #expect(event.evictions == 1)
        #expect(container.resolve(CachedThing.self) !== first)
        let statistics = container.statistics()
        #expect(statistics.cachedEvictions == 1)
        #expect(statistics.memoryPressureEvents == 1)
    }

    /// As a service of a `ServiceGroup`, the monitor watches from its `run()` until graceful
    /// shutdown, and its thread is stopped then: the watch is the group's to start and stop.
    @Test func runsAsAServiceUntilGracefulShutdown() async throws {
        let fifo = temporaryPath("service")
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        var configuration = MemoryPressureConfiguration()
        configuration.environment = ["MEMORY_PRESSURE_WATCH": fifo]
        let monitor = MemoryPressureMonitor(configuration: configuration) { 0 }
        #expect(monitor.source == nil, "nothing watches before run()")
        let group = ServiceGroup(services: [monitor], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        await eventually { monitor.source != nil }
        #expect(monitor.source == .systemdWatch(path: fifo))
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(monitor.source == nil, "stopped with the group")
    }

    @Test func devNullTurnsMonitoringOff() {
        var configuration = MemoryPressureConfiguration()
        configuration.environment = ["MEMORY_PRESSURE_WATCH": "/dev/null"]
        let monitor = MemoryPressureMonitor(configuration: configuration) { 0 }
        guard case .unavailable(let reason) = monitor.start() else { Issue.record("expected unavailable"); return }
        #expect(reason.contains("/dev/null"))
    }

    @Test func regularFileGetsTheDecodedTrigger() throws {
        let path = temporaryPath("pressure")
        let fd = open(path, O_CREAT | O_WRONLY, 0o600)
        close(fd)
        defer { unlink(path) }
        var configuration = MemoryPressureConfiguration()
        // base64 of "some 100000 2000000"
        configuration.environment = ["MEMORY_PRESSURE_WATCH": path, "MEMORY_PRESSURE_WRITE": "c29tZSAxMDAwMDAgMjAwMDAwMA=="]
        let monitor = MemoryPressureMonitor(configuration: configuration) { 0 }
        #expect(monitor.start() == .systemdWatch(path: path))
        monitor.stop()
        #expect(readTextFile(path) == "some 100000 2000000")
    }

    @Test func missingSourcesReportUnavailableOrPolling() {
        var configuration = MemoryPressureConfiguration()
        configuration.environment = [:]
        configuration.procPressurePath = "/nonexistent/pressure/memory"
        configuration.selfCgroupPath = "/nonexistent/cgroup"
        let monitor = MemoryPressureMonitor(configuration: configuration) { 0 }
        guard case .unavailable(let reason) = monitor.start() else { Issue.record("expected unavailable"); return }
        #expect(reason.contains("/nonexistent/pressure/memory"))
    }

    @Test func base64Decoding() {
        #expect(Base64.decode("c29tZSAxNTAwMDAgMTAwMDAwMA==").map { String(decoding: $0, as: UTF8.self) } == "some 150000 1000000")
        #expect(Base64.decode("YQ==") == [0x61])
        #expect(Base64.decode("not base64!") == nil)
    }
}

@Suite struct PressureStallInformationTests {
    @Test func parsesKernelText() throws {
        let text = """
            some avg10=1.25 avg60=0.50 avg300=0.10 total=123456
            full avg10=0.00 avg60=0.00 avg300=0.00 total=42

            """
        let reading = try PressureStallInformation.parse(text)
        #expect(reading.some == PressureAverages(avg10: 1.25, avg60: 0.5, avg300: 0.1, total: 123_456))
        #expect(reading.full?.total == 42)
    }

    @Test func parsesThisMachinesFileWhenThereIsOne() throws {
        guard let text = readTextFile("/proc/pressure/memory") else { return }
        let reading = try PressureStallInformation.parse(text)
        #expect(reading.some.avg10 >= 0)
    }

    @Test(arguments: [
        "", "garbage", "some avg10=abc avg60=0 avg300=0 total=1", "some avg10=1 avg60=1 total=1",
        "some avg10=101 avg60=0 avg300=0 total=1", "full avg10=0 avg60=0 avg300=0 total=0", "some avg10",
    ])
    func malformedTextIsAnError(text: String) {
        #expect(throws: PSIParseError.self) { try PressureStallInformation.parse(text) }
    }
}
