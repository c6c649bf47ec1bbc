import Dispatch
import WeaveSupport

/// Where blocking library calls run: OpenSSL, sd-bus, getaddrinfo, reading a configuration or the
/// textfile directory. Never on the event loop or Swift's cooperative pool, which serve `/livez` and
/// run the checks, and never on more than `maxThreads` threads at once per `Lane`, whatever is
/// stuck: each kind of call has threads of its own, so a system bus that never answers holds bus
/// calls only, and a DNS check, the textfiles and a reload go on.
///
/// Each call names its caller (`key`: a check, a unit, the textfiles). A caller has at most one call
/// in flight: while one is still running (a bus that never answers, a FIFO where a file was
/// expected), the next is refused at once, so a stalled call costs one slot, not a thread per round.
/// The caller waits at most its deadline; the thread runs on until the library returns, keeping its
/// slot and its key.
final class BlockingCalls: Sendable {
    /// The kinds of blocking call, each with threads and a queue of its own.
    enum Lane: String, CaseIterable, Sendable {
        /// sd-bus: systemd units, and the unit of an application's process.
        case bus
        /// getaddrinfo.
        case dns
        /// OpenSSL: the https checks.
        case tls
        /// Files: the configuration at a reload, the textfile directory, the state directory.
        case files
    }

    /// Threads running calls of one lane at once, at most.
    let maxThreads: Int
    /// Calls of one lane waiting for a thread, at most; past it a call is refused.
    let maxWaiting: Int
    private let state = Locked(State())

    private struct State {
        var running: [Lane: Int] = [:]
        var waiting: [Lane: [Call]] = [:]
        /// The keys with a call waiting or running, and since when.
        var busy: [String: ContinuousClock.Instant] = [:]
    }

    /// One call: its work, and the waiter it answers once (the work's end or the deadline, whichever is first).
    private final class Call: Sendable {
        let key: String
        let lane: Lane
        let work: @Sendable () -> Void
        let expire: @Sendable () -> Bool
        init(key: String, lane: Lane, work: @escaping @Sendable () -> Void, expire: @escaping @Sendable () -> Bool) {
            self.key = key
            self.lane = lane
            self.work = work
            self.expire = expire
        }
    }

    init(maxThreads: Int = 4, maxWaiting: Int = 256) {
        self.maxThreads = max(1, maxThreads)
        self.maxWaiting = maxWaiting
    }

    /// Runs `work` on one of `lane`'s threads and returns its value, or throws when `key` has a call
    /// in flight, when too many calls of the lane wait, or when `deadline` passes first.
    func run<T: Sendable>(_ key: String, lane: Lane, deadline: Duration,
                          _ work: @escaping @Sendable () -> T) async throws(BlockingCallFailure) -> T {
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
            let call = Call(key: key, lane: lane, work: { _ = reply(.success(work())) }, expire: { reply(.failure(.timedOut(after: deadline))) })
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
            let start = state.running[call.lane, default: 0] < maxThreads
            if start {
                state.running[call.lane, default: 0] += 1
            } else if state.waiting[call.lane, default: []].count < maxWaiting {
                state.waiting[call.lane, default: []].append(call)
            } else {
                return (false, .saturated(lane: call.lane, threads: maxThreads, waiting: state.waiting[call.lane, default: []].count))
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
            if let index = state.waiting[call.lane]?.firstIndex(where: { $0 === call }) {
                state.waiting[call.lane]!.remove(at: index)
                state.busy[call.key] = nil
            }
        }
    }

    /// Runs `first`, then whatever waits in its lane, on this thread; gives the slot back when nothing does.
    private func drain(first: Call) {
        var next: Call? = first
        while let call = next {
            call.work()
            next = state.withLock { state -> Call? in
                state.busy[call.key] = nil
                guard state.waiting[call.lane]?.isEmpty == false else {
                    state.running[call.lane, default: 1] -= 1
                    return nil
                }
                return state.waiting[call.lane]!.removeFirst()
            }
        }
    }

    /// How many calls run now, in all lanes (a test and the daemon's metrics read it).
    var running: Int { state.withLock { $0.running.values.reduce(0, +) } }
}

/// Why a blocking call gave no answer.
enum BlockingCallFailure: Error, CustomStringConvertible {
    /// The caller's previous call has not returned yet (it has run this long).
    case busy(since: Duration)
    /// Every thread of the lane is taken and too many calls wait.
    case saturated(lane: BlockingCalls.Lane, threads: Int, waiting: Int)
    /// No answer within the deadline (the call may still be running).
    case timedOut(after: Duration)

    var description: String {
        switch self {
        case .busy(let since):
            "its previous call has not returned after \(Int(since.totalSeconds)) s (a stalled file, bus or peer); not started again until it does"
        case .saturated(let lane, let threads, let waiting):
            "all \(threads) threads for blocking \(lane.rawValue) calls are taken and \(waiting) calls wait"
        case .timedOut(let after):
            "no answer within \(after.totalSeconds) s"
        }
    }
}
