/// Wakes the tasks that wait for something to change: its owner calls `signal()` after each change
/// (a log appended to, a report published, a server stopping), and each waiter checks its own
/// condition again (`wait(for:on:until:)`). A waiter costs nothing until a signal or its deadline:
/// no polling. The endpoints' watches (`/health?index=…&wait=…`, `/events?after=…&wait=…`) wait on
/// these.
public final class ChangeSignal: Sendable {
    private let waiters = Locked<(next: Int, all: [Int: Wake], fired: UInt64)>((0, [:], 0))

    public init() {}

    /// Wakes every task waiting now; each checks its condition again.
    public func signal() {
        let woken = waiters.withLock { state -> [Wake] in
            state.fired &+= 1
            guard !state.all.isEmpty else { return [] }
            defer { state.all.removeAll(keepingCapacity: true) }
            return Array(state.all.values)
        }
        for wake in woken { wake.fire() }
    }

    /// How many tasks wait on it now (tests, and the bound on them).
    package var waiting: Int { waiters.withLock { $0.all.count } }

    /// How many times it fired: a waiter for the next signal waits until this moves.
    package var fired: UInt64 { waiters.withLock { $0.fired } }

    /// Returns true once `ready()` holds, or false when `timeout` has passed or the task is cancelled
    /// first. `ready` is checked at once, then each time one of `signals` fires: whatever changes
    /// what it reads must signal one of them after the change.
    package static func wait(for timeout: Duration, on signals: [ChangeSignal], until ready: @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if ready() { return true }
            guard !Task.isCancelled, ContinuousClock.now < deadline else { return false }
            await waitOnce(until: deadline, on: signals, ready: ready)
        }
    }

    /// Sleeps until a signal, the deadline or cancellation, unless `ready()` holds once registered.
    private static func waitOnce(until deadline: ContinuousClock.Instant, on signals: [ChangeSignal],
                                 ready: @Sendable () -> Bool) async {
        let wake = Wake()
        let ids = signals.map { $0.add(wake) }
        defer { for (signal, id) in zip(signals, ids) { signal.remove(id) } }
        // Registered first: a change after this check fires `wake`, so none is missed.
        guard !ready() else { return }
        let timer = OneShotTimer(after: deadline - ContinuousClock.now) { wake.fire() }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                wake.arm(continuation)
            }
        } onCancel: {
            wake.fire()
        }
    }

    private func add(_ wake: Wake) -> Int {
        waiters.withLock { state in
            state.next += 1
            state.all[state.next] = wake
            return state.next
        }
    }

    private func remove(_ id: Int) {
        waiters.withLock { _ = $0.all.removeValue(forKey: id) }
    }

    /// One waiter's continuation, resumed once: by whichever of a signal, the deadline and
    /// cancellation comes first (even before it is armed).
    private final class Wake: Sendable {
        private let state = Locked<(continuation: CheckedContinuation<Void, Never>?, fired: Bool)>((nil, false))

        func arm(_ continuation: CheckedContinuation<Void, Never>) {
            let resumeNow = state.withLock { state -> Bool in
                guard !state.fired else { return true }
                state.continuation = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }

        func fire() {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.fired = true
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume()
        }
    }
}
