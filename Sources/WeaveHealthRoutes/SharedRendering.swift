import NIOCore
import WeavePrometheus
import WeaveSupport

/// `/metrics` renders shared between the requests that want the same format: a request that arrives
/// while one is being rendered waits for it instead of rendering again. With a `reuse` interval, a
/// render starts at most once per interval: a request that arrives sooner after the last one waits
/// for the interval to end and shares the render that starts then. So clients that ask at once, or
/// in a loop, cost the application one collection and one answer each per interval, whatever their
/// number: its endpoint cannot be made to spend its cores on renders by whoever reaches its socket.
final class SharedRendering: Sendable {
    private let state = Locked<(inFlight: [Exposition.Format: Task<ByteBuffer, Never>], last: [Exposition.Format: ContinuousClock.Instant])>(
        ([:], [:]))

    /// The body for `format`: a render in flight, or a new one by `render`, started no sooner than
    /// `reuse` after the last.
    func body(_ format: Exposition.Format, reuse: Duration,
              render: @escaping @Sendable () async -> ByteBuffer) async -> ByteBuffer {
        while true {
            let now = ContinuousClock.now
            let next = state.withLock { current -> Next in
                if let running = current.inFlight[format] { return .join(running) }
                if reuse > .zero, let last = current.last[format], now < last + reuse { return .wait(until: last + reuse) }
                let task = Task { [self] in
                    let body = await render()
                    state.withLock { $0.inFlight[format] = nil }
                    return body
                }
                current.inFlight[format] = task
                current.last[format] = now
                return .join(task)
            }
            switch next {
            case .join(let task):
                return await task.value
            case .wait(let wake):
                // Cancelled meanwhile: nobody waits for this answer any more.
                guard (try? await Task.sleep(until: wake)) != nil else { return ByteBuffer() }
            }
        }
    }

    /// What a request does: join a render, or wait for the interval to end.
    private enum Next {
        case join(Task<ByteBuffer, Never>)
        case wait(until: ContinuousClock.Instant)
    }
}
