import Dispatch

/// Calls a closure once, after a delay, unless cancelled first. A dispatch timer rather than a
/// sleeping task: cancelled, it is gone, where a cancelled `Task.sleep` still wakes the process at
/// its deadline. An idle server starts many such timers and cancels most of them (a check's timeout,
/// a watch's wait), so each one it leaves behind would be a wake for nothing.
package final class OneShotTimer: @unchecked Sendable { // a dispatch source is safe to use from any thread
    private let source: any DispatchSourceTimer

    /// Starts the timer: `fire` is called on a global queue after `delay` (taken as 0 when
    /// negative, and as 68 years when longer).
    package init(after delay: Duration, _ fire: @escaping @Sendable () -> Void) {
        let delay = min(max(delay, .zero), .seconds(Int64(Int32.max)))
        let nanoseconds = Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
        let source = DispatchSource.makeTimerSource(queue: .global())
        source.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
        // Cancelled once fired: a fired one-shot source is kept by dispatch until it is.
        source.setEventHandler {
            fire()
            source.cancel()
        }
        source.activate()
        self.source = source
    }

    /// Stops it: `fire` is not called unless it has begun.
    package func cancel() {
        source.cancel()
    }
}
