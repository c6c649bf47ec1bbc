import WeaveSupport

/// Renders shared between the requests that want the same `Key` (`/metrics`: the format; `/health`:
/// whether details show): a request that arrives while one is being rendered waits for it instead of
/// rendering again. With a `reuse` interval, a render starts at most once per interval: a request
/// that arrives sooner after the last one waits for the interval to end and shares the render that
/// starts then. So clients that ask at once, or in a loop, cost one collection and one answer's
/// memory each per interval, whatever their number: an endpoint cannot be made to spend its cores
/// or its memory on renders by whoever reaches its socket.
final class SharedRendering<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let state = Locked<(inFlight: [Key: Task<Value, Never>], last: [Key: ContinuousClock.Instant], joined: [Key: Int])>(
        ([:], [:], [:]))

    /// How many requests wait for the render of `key` in flight now.
    func joined(_ key: Key) -> Int {
        state.withLock { $0.joined[key] ?? 0 }
    }

    /// The value for `key`: a render in flight, or a new one by `render`, started no sooner than
    /// `reuse` after the last; nil when the task is cancelled while it waits for the interval.
    func value(_ key: Key, reuse: Duration, render: @escaping @Sendable () async -> Value) async -> Value? {
        while true {
            let now = ContinuousClock.now
            let next = state.withLock { current -> Next in
                if let running = current.inFlight[key] {
                    current.joined[key, default: 0] += 1
                    return .join(running)
                }
                if reuse > .zero, let last = current.last[key], now < last + reuse { return .wait(until: last + reuse) }
                let task = Task { [self] in
                    let value = await render()
                    state.withLock { $0.inFlight[key] = nil }
                    return value
                }
                current.inFlight[key] = task
                current.last[key] = now
                current.joined[key, default: 0] += 1
                return .join(task)
            }
            switch next {
            case .join(let task):
                let value = await task.value
                state.withLock { $0.joined[key] = $0.joined[key].flatMap { $0 > 1 ? $0 - 1 : nil } }
                return value
            case .wait(let wake):
                // Cancelled meanwhile: nobody waits for this answer any more.
                guard (try? await Task.sleep(until: wake)) != nil else { return nil }
            }
        }
    }

    /// What a request does: join a render, or wait for the interval to end.
    private enum Next {
        case join(Task<Value, Never>)
        case wait(until: ContinuousClock.Instant)
    }
}
