import Testing
@testable import WeaveDI
import WeaveSupport
import WeaveTestSupport

@Suite struct LogThrottleTests {
    private static let ignore: @Sendable (Int, Duration) -> Void = { _, _ in }

    @Test func admitsTheBurstThenSummarisesTheRest() async throws {
        let clock = ManualClock()
        let throttle = LogThrottle(limit: LogRateLimit(burst: 3, window: .milliseconds(200)), clock: clock)
        let summaries = Locked<[Int]>([])
        var admitted = 0
        for _ in 0..<1_000 where throttle.admit("error A", summary: { count, _ in summaries.withLock { $0.append(count) } }) {
            admitted += 1
        }
        #expect(admitted == 3)
        // Another key has a window of its own.
        #expect(throttle.admit("error B", summary: Self.ignore))
        clock.advance(by: .milliseconds(199))
        #expect(!throttle.admit("error A", summary: Self.ignore), "still inside its window")
        #expect(summaries.withLock { $0 } == [], "no summary before the window ends")
        clock.advance(by: .milliseconds(1))
        await eventually { !summaries.withLock { $0.isEmpty } }
        #expect(summaries.withLock { $0 } == [998])
        // After the summary the next window starts with a fresh burst.
        #expect(throttle.admit("error A", summary: Self.ignore))
    }

    @Test func noSummaryWhenNothingWasSuppressed() async throws {
        let clock = ManualClock()
        let throttle = LogThrottle(limit: LogRateLimit(burst: 5, window: .milliseconds(50)), clock: clock)
        let summaries = Locked(0)
        let count: @Sendable (Int, Duration) -> Void = { _, _ in summaries.withLock { $0 += 1 } }
        for _ in 0..<5 { #expect(throttle.admit("slow", summary: count)) }
        #expect(clock.sleeping == 0, "nothing suppressed, no window's end awaited")
        clock.advance(by: .milliseconds(50))
        #expect(throttle.admit("slow", summary: count), "a new window")
        #expect(summaries.withLock { $0 } == 0)
    }

    /// A window's summary outlives its container (a reload replaces the daemon's): what was
    /// suppressed is still said at the window's end, and then the throttle is let go.
    @Test func aReleasedThrottleStillSummarisesItsWindowThenGoes() async throws {
        let clock = ManualClock()
        let summaries = Locked<[Int]>([])
        weak var released: LogThrottle?
        do {
            let throttle = LogThrottle(limit: LogRateLimit(burst: 1, window: .milliseconds(50)), clock: clock)
            released = throttle
            for _ in 0..<3 { _ = throttle.admit("slow", summary: { count, _ in summaries.withLock { $0.append(count) } }) }
        }
        #expect(released != nil, "held until its window ends")
        clock.advance(by: .milliseconds(50))
        await eventually { !summaries.withLock { $0.isEmpty } }
        #expect(summaries.withLock { $0 } == [2])
        await eventually { released == nil }
        #expect(released == nil, "the window's task lets the throttle go once it has spoken")
    }

    @Test func everyEventHasItsOwnValidMessageID() {
        let ids = WeaveEvent.containerEvents.map(\.messageID)
        #expect(Set(ids).count == WeaveEvent.containerEvents.count)
        for id in ids { #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }) }
    }
}
