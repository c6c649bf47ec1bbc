import Dispatch
import WeaveSupport

/// Where blocking library calls run: OpenSSL, sd-bus, getaddrinfo, reading a configuration or the
/// textfile directory. Never on the event loop or Swift's cooperative pool, which serve `/livez` and
/// run the checks, and never on more than `maxThreads` threads at once, whatever is stuck.
///
/// Each call names its caller (`key`: a check, a unit, the textfiles). A caller has at most one call
/// in flight: while one is still running (a bus that never answers, a FIFO where a file was
/// expected), the next is refused at once, so a stalled call costs one slot, not a thread per round.
/// The caller waits at most its deadline; the thread runs on until the library returns, keeping its
/// slot and its key.
final class BlockingCalls: Sendable {
    /// Threads running calls at once, at most.
    let maxThreads: Int
    /// Calls waiting for a thread, at most; past it a call is refused.
    let maxWaiting: Int
    private let state = Locked(State())

    private struct State {
        var running = 0
        var waiting: [Call] = []
        /// The keys with a call waiting or running, and since when.
        var busy: [String: ContinuousClock.Instant] = [:]
    }

    /// One call: its work, and the waiter it answers once (the work's end or the deadline, whichever is first).
    private final class Call: Sendable {
        let key: String
        let work: @Sendable () -> Void
        let expire: @Sendable () -> Bool
        init(key: String, work: @escaping @Sendable () -> Void, expire: @escaping @Sendable () -> Bool) {
            self.key = key
            self.work = work
            self.expire = expire
        }
    }

    init(maxThreads: Int = 8, maxWaiting: Int = 256) {
        self.maxThreads = max(1, maxThreads)
        self.maxWaiting = maxWaiting
    }

    /// Runs `work` on one of the threads and returns its value, or throws when `key` has a call in
    /// flight, when too many calls wait, or when `deadline` passes first.
    func run<T: Sendable>(_ key: String, deadline: Duration, _ work: @escaping @Sendable () -> T) async throws(BlockingCallFailure) -> T {
        // The waiter, until it is answered, and the timer of its deadline (cancelled by an answer, so
        // a call that returns at once holds no sleeping task for its whole deadline).
        let waiter = Locked<(answer: CheckedContinuation<Result<T, BlockingCallFailure>, Never>?, timer: Task<Void, Never>?)>((nil, nil))
        @Sendable func reply(_ result: Result<T, BlockingCallFailure>) -> Bool {
            let (answer, timer) = waiter.withLock { waiter in
                defer { waiter = (nil, nil) }
                return waiter
            }
            timer?.cancel()
            guard let answer else { return false }
            answer.resume(returning: result)
            return true
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, BlockingCallFailure>, Never>) in
            waiter.withLock { $0.answer = continuation }
            let call = Call(key: key, work: { _ = reply(.success(work())) }, expire: { reply(.failure(.timedOut(after: deadline))) })
            if let refusal = submit(call) {
                _ = reply(.failure(refusal))
                return
            }
            let timer = Task {
                guard (try? await Task.sleep(for: deadline)) != nil else { return }
                if call.expire() { self.forget(call) }
            }
            // Answered meanwhile: the timer is not needed.
            if waiter.withLock({ waiter in
                guard waiter.answer != nil else { return true }
                waiter.timer = timer
                return false
            }) { timer.cancel() }
        }
        return try result.get()
    }

    /// Queues `call` or starts it on a thread; the reason when it is refused.
    private func submit(_ call: Call) -> BlockingCallFailure? {
        let outcome = state.withLock { state -> (start: Bool, refusal: BlockingCallFailure?) in
            if let since = state.busy[call.key] { return (false, .busy(since: ContinuousClock.now - since)) }
            let start = state.running < maxThreads
            if start {
                state.running += 1
            } else if state.waiting.count < maxWaiting {
                state.waiting.append(call)
            } else {
                return (false, .saturated(threads: maxThreads, waiting: state.waiting.count))
            }
            state.busy[call.key] = ContinuousClock.now
            return (start, nil)
        }
        if outcome.start { DispatchQueue.global().async { self.drain(first: call) } }
        return outcome.refusal
    }

    /// A call that expired while waiting for a thread never runs; its key is free again.
    private func forget(_ call: Call) {
        state.withLock { state in
            if let index = state.waiting.firstIndex(where: { $0 === call }) {
                state.waiting.remove(at: index)
                state.busy[call.key] = nil
            }
        }
    }

    /// Runs `first`, then whatever waits, on this thread; gives the slot back when nothing does.
    private func drain(first: Call) {
        var next: Call? = first
        while let call = next {
            call.work()
            next = state.withLock { state -> Call? in
                state.busy[call.key] = nil
                guard !state.waiting.isEmpty else {
                    state.running -= 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
        }
    }

    /// How many calls run now (a test and the daemon's metrics read it).
    var running: Int { state.withLock { $0.running } }
}

/// Why a blocking call gave no answer.
enum BlockingCallFailure: Error, CustomStringConvertible {
    /// The caller's previous call has not returned yet (it has run this long).
    case busy(since: Duration)
    /// Every thread is taken and too many calls wait.
    case saturated(threads: Int, waiting: Int)
    /// No answer within the deadline (the call may still be running).
    case timedOut(after: Duration)

    var description: String {
        switch self {
        case .busy(let since):
            "its previous call has not returned after \(Int(since.totalSeconds)) s (a stalled file, bus or peer); not started again until it does"
        case .saturated(let threads, let waiting):
            "all \(threads) threads for blocking calls are taken and \(waiting) calls wait"
        case .timedOut(let after):
            "no answer within \(after.totalSeconds) s"
        }
    }
}
