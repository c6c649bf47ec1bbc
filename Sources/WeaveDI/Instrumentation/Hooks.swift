import Logging
import Synchronization

/// An event the container reports to hook handlers, off the resolving thread.
enum HookEvent: Sendable {
    case slowResolution(service: String, seconds: Double, threshold: Duration, throttle: LogThrottle)
    case resolutionError(service: String, error: ResolutionError)
    case memoryPressure(MemoryPressureEvent)
    /// Resumes the continuation once every earlier event has been delivered.
    case flush(CheckedContinuation<Void, Never>)
}

/// The process-wide hook handlers and their delivery. Resolving threads only enqueue an event
/// (and only when something listens, or for rare slow events); one task delivers them in order,
/// so a slow handler delays other handlers but never a resolve.
enum Hooks {
    private struct Handlers {
        var nextID = 0
        var slow: [Int: @Sendable (String, Double) -> Void] = [:]
        var error: [Int: @Sendable (String, any Error) -> Void] = [:]
        var pressure: [Int: @Sendable (MemoryPressureEvent) -> Void] = [:]
    }

    private static let handlers = Locked(Handlers())
    /// Whether any resolution-error handler is installed; read on error paths before building events.
    private static let hasErrorHandlers = Atomic<Bool>(false)

    private static let queue: AsyncStream<HookEvent>.Continuation = {
        let (stream, continuation) = AsyncStream<HookEvent>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        Task.detached { await deliver(stream) }
        return continuation
    }()

    // MARK: Registration

    static func addSlow(_ handler: @escaping @Sendable (String, Double) -> Void) -> HookToken {
        let id = handlers.withLock { $0.nextID += 1; $0.slow[$0.nextID] = handler; return $0.nextID }
        return HookToken { handlers.withLock { _ = $0.slow.removeValue(forKey: id) } }
    }

    static func addError(_ handler: @escaping @Sendable (String, any Error) -> Void) -> HookToken {
        let id = handlers.withLock { state in
            state.nextID += 1
            state.error[state.nextID] = handler
            hasErrorHandlers.store(true, ordering: .relaxed)
            return state.nextID
        }
        return HookToken {
            handlers.withLock { state in
                state.error.removeValue(forKey: id)
                hasErrorHandlers.store(!state.error.isEmpty, ordering: .relaxed)
            }
        }
    }

    static func addPressure(_ handler: @escaping @Sendable (MemoryPressureEvent) -> Void) -> HookToken {
        let id = handlers.withLock { $0.nextID += 1; $0.pressure[$0.nextID] = handler; return $0.nextID }
        return HookToken { handlers.withLock { _ = $0.pressure.removeValue(forKey: id) } }
    }

    // MARK: Events

    /// Reports a resolve slower than its container's threshold: logged at warning level within the
    /// container's rate limit (`throttle`), and sent to the handlers.
    static func slow(service: String, nanos: UInt64, threshold: UInt64, throttle: LogThrottle) {
        queue.yield(.slowResolution(service: service, seconds: Double(nanos) / 1e9, threshold: .nanoseconds(Int64(threshold)),
                                    throttle: throttle))
    }

    static func error(service: String, error: ResolutionError) {
        guard hasErrorHandlers.load(ordering: .relaxed) else { return }
        queue.yield(.resolutionError(service: service, error: error))
    }

    static func memoryPressure(_ event: MemoryPressureEvent) {
        queue.yield(.memoryPressure(event))
    }

    /// Waits until every event reported so far has reached its handlers.
    static func flush() async {
        await withCheckedContinuation { queue.yield(.flush($0)) }
    }

    private static func deliver(_ stream: AsyncStream<HookEvent>) async {
        for await event in stream {
            switch event {
            case .slowResolution(let service, let seconds, let threshold, let throttle):
                DILog.throttled(.slowResolution, service: service, .warnings, .warning,
                                "Slow resolution of \(service): \(seconds * 1000) ms (threshold \(threshold))",
                                metadata: ["dependency": "\(service)", "duration_usec": "\(Int64(seconds * 1_000_000))",
                                           "threshold_usec": "\(threshold.totalNanoseconds / 1_000)"],
                                throttle: throttle)
                for handler in handlers.withLock({ Array($0.slow.values) }) { handler(service, seconds) }
            case .resolutionError(let service, let error):
                for handler in handlers.withLock({ Array($0.error.values) }) { handler(service, error) }
            case .memoryPressure(let event):
                for handler in handlers.withLock({ Array($0.pressure.values) }) { handler(event) }
            case .flush(let continuation):
                continuation.resume()
            }
        }
    }
}
