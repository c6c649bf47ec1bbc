import Foundation
import NIOPosix
import Synchronization
import Testing
@testable import WeaveHealthd

@Suite struct HeapTrimmerTests {
    /// Bursts closer together than the quiet period are trimmed once, after the last of them; a burst
    /// after that is trimmed again.
    @Test func trimsOnceAfterTheLastBurstOfAQuietPeriod() async throws {
        let trims = Atomic<Int>(0)
        let trimmer = HeapTrimmer(quiet: .milliseconds(500)) { trims.add(1, ordering: .relaxed) }
        let running = Task { try await trimmer.run() }
        defer { running.cancel() }
        for _ in 0..<5 {
            trimmer.burstEnded()
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(trims.load(ordering: .relaxed) == 0) // 250 ms of bursts, none 500 ms apart
        try await Task.sleep(for: .milliseconds(1_000))
        #expect(trims.load(ordering: .relaxed) == 1)
        trimmer.burstEnded()
        try await Task.sleep(for: .milliseconds(1_000))
        #expect(trims.load(ordering: .relaxed) == 2)
        try await Task.sleep(for: .milliseconds(700))
        #expect(trims.load(ordering: .relaxed) == 2) // no burst, no trim
    }

    /// A scrape or health round of no application is no burst: a daemon without applications does
    /// not trim its heap after every /metrics or every health interval.
    @Test func noApplicationsNoTrim() async throws {
        let trims = Atomic<Int>(0)
        let trimmer = HeapTrimmer(quiet: .milliseconds(100)) { trims.add(1, ordering: .relaxed) }
        let running = Task { try await trimmer.run() }
        defer { running.cancel() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weave-trim-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(1), budget: .seconds(2)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16), trimmer: trimmer)
        let metrics = DaemonExposition(fleet: { fleet })
        for _ in 0..<3 { _ = await metrics.collect() }
        #expect(await fleet.refreshHealth() == 0)
        try await Task.sleep(for: .milliseconds(400))
        #expect(trims.load(ordering: .relaxed) == 0)
    }
}
