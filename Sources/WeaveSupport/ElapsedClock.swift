/// A `Clock` read as the time since it was wrapped. A type that keeps instants takes one of these,
/// the continuous clock by default, so that its tests can pass a clock they move themselves
/// without the type being generic over its clock.
package struct ElapsedClock: Sendable {
    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// `ContinuousClock`, from now.
    package static var continuous: ElapsedClock { ElapsedClock(ContinuousClock()) }

    /// The time since this value was made.
    package var now: Duration { read() }

    /// Returns once `now` has reached `instant` (at once if it has); throws if the task is cancelled.
    package func sleep(until instant: Duration) async throws {
        try await sleeper(instant)
    }
}
