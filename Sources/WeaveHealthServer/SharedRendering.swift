import NIOCore
import WeaveDI
import WeavePrometheus

/// `/metrics` renders shared between the requests that want the same format: a request that arrives
/// while one is being rendered waits for it instead of rendering again, and one that arrives within
/// `reuse` of the last render gets that render. So clients that ask at once, or in a loop, cost one
/// collection at a time, and at most one per `reuse`: an application's endpoint cannot be made to
/// spend its cores on renders by whoever can reach its socket.
final class SharedRendering: Sendable {
    private struct Last {
        var body: ByteBuffer
        var at: ContinuousClock.Instant
    }

    private let state = Locked<(inFlight: [Exposition.Format: Task<ByteBuffer, Never>], last: [Exposition.Format: Last])>(([:], [:]))

    /// The body for `format`: a render in flight, a render finished within `reuse`, or a new one by `render`.
    func body(_ format: Exposition.Format, reuse: Duration,
              render: @escaping @Sendable () async -> ByteBuffer) async -> ByteBuffer {
        let now = ContinuousClock.now
        let task = state.withLock { current -> Task<ByteBuffer, Never>? in
            if let running = current.inFlight[format] { return running }
            if reuse > .zero, let last = current.last[format], now - last.at < reuse { return nil }
            let keep = reuse > .zero // a render that may not be reused is not kept (the daemon's are megabytes)
            let task = Task { [self] in
                let body = await render()
                state.withLock { state in
                    state.inFlight[format] = nil
                    if keep { state.last[format] = Last(body: body, at: ContinuousClock.now) }
                }
                return body
            }
            current.inFlight[format] = task
            return task
        }
        if let task { return await task.value }
        return state.withLock { $0.last[format]!.body }
    }
}
