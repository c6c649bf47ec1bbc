import Foundation
import NIOPosix
import Synchronization
import Testing
@testable import WeaveHealthd
import WeaveSupport
import WeaveTestSupport

@Suite struct HeapTrimmerTests {
    /// Bursts closer together than the quiet period are trimmed once, after the last of them; a burst
    /// after that is trimmed again.
    @Test func trimsOnceAfterTheLastBurstOfAQuietPeriod() async throws {
        let clock = ManualClock()
        let trims = Atomic<Int>(0)
        let trimmer = HeapTrimmer(quiet: .milliseconds(500), clock: ElapsedClock(clock)) { trims.add(1, ordering: .relaxed) }
        let running = Task { try await trimmer.run() }
        defer { running.cancel() }
        for _ in 0..<5 {
            trimmer.burstEnded()
            clock.advance(by: .milliseconds(50))
        }
        // The last burst ended at 200 ms; the clock is at 250 ms. `advance` takes a woken sleeper
        // off at once, so one asleep after it is asleep again.
        await eventually { clock.sleeping == 1 }
        clock.advance(by: .milliseconds(449))
        await eventually { clock.sleeping == 1 }
        #expect(trims.load(ordering: .relaxed) == 0, "1 ms of the quiet period left")
        clock.advance(by: .milliseconds(1))
        await eventually { trims.load(ordering: .relaxed) == 1 }
        trimmer.burstEnded()
        await eventually { clock.sleeping == 1 }
        #expect(trims.load(ordering: .relaxed) == 1)
        clock.advance(by: .milliseconds(500))
        await eventually { trims.load(ordering: .relaxed) == 2 }
        clock.advance(by: .seconds(3_600))
        #expect(trimmer.lastBurstEnd == .milliseconds(700) && clock.sleeping == 0, "no burst, nothing awaited")
        #expect(trims.load(ordering: .relaxed) == 2)
    }

    /// A scrape or health round of no application is no burst: a daemon without applications does
    /// not trim its heap after every /metrics or every health interval.
    @Test func noApplicationsNoTrim() async throws {
        let trimmer = HeapTrimmer(quiet: .milliseconds(100)) {}
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weave-trim-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fleet = AppFleet(configuration: AppsConfiguration(directory: directory, timeout: .seconds(1), budget: .seconds(2)),
                             group: MultiThreadedEventLoopGroup.singleton, connections: ConnectionPool(capacity: 16), trimmer: trimmer)
        let metrics = DaemonExposition(fleet: { fleet })
        for _ in 0..<3 { _ = await metrics.collect() }
        #expect(await fleet.refreshHealth() == 0)
        #expect(trimmer.lastBurstEnd == nil, "a round tells the trimmer before it returns, when it asked anyone")
    }
}
