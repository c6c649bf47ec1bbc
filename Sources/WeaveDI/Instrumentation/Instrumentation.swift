public import Logging
import Synchronization
import WeaveSupport

/// Where a container's events go: its logger and log level, and its hook handlers. Each container
/// has one, passed in or made for it (a child shares its parent's), so two containers' handlers and
/// levels never mix. `UnifiedDI`'s hooks and `setLogLevel` are those of `Container.live`.
///
/// Resolving threads only enqueue an event (and only when it is slow or something listens); a task
/// delivers events in order, so a slow handler delays other handlers but never a resolve. The task
/// starts with the first event, and ends when the instrumentation is released.
public final class Instrumentation: Sendable {
    /// What the delivery task needs; it holds this, not the instrumentation, so that releasing the
    /// instrumentation finishes the stream and ends the task.
    private final class State: Sendable {
        let slow = HookList<@Sendable (String, Double) -> Void>()
        let slowChains = HookList<@Sendable (SlowResolution) -> Void>()
        let errors = HookList<@Sendable (String, any Error) -> Void>()
        let pressure = HookList<@Sendable () -> Void>()
        let startup = HookList<@Sendable (StartupTree) -> Void>()
        let level: Atomic<Int>
        let logsEvents = Atomic<Bool>(true)
        /// The event records held back (`holdEventLogs()`), and how many did not fit; nil when none are.
        let held = Locked<(records: [HeldRecord], dropped: Int)?>(nil)
        let logger: Locked<Logger>

        init(logger: Logger, level: LogLevel) {
            self.logger = Locked(logger)
            self.level = Atomic(level.rawValue)
        }

        func deliver(_ stream: AsyncStream<Event>) async {
            for await event in stream {
                switch event {
                case .slowResolution(let resolution, let throttle):
                    let service = resolution.service, seconds = resolution.duration.totalSeconds
                    throttled(.slowResolution, service: service, .warnings, .warning, Instrumentation.message(resolution),
                              metadata: Instrumentation.metadata(resolution), throttle: throttle)
                    for handler in slow.all { handler(service, seconds) }
                    for handler in slowChains.all { handler(resolution) }
                case .resolutionError(let service, let error, let throttle):
                    if let throttle {
                        throttled(.resolutionError, service: service, .errors, .error,
                                  "Resolving \(service) failed (\(error.kind.rawValue)): \(error)",
                                  metadata: ["dependency": "\(service)", "error_kind": "\(error.kind.rawValue)", "error": "\(error)"],
                                  throttle: throttle)
                    }
                    for handler in errors.all { handler(service, error) }
                case .memoryPressure:
                    for handler in pressure.all { handler() }
                case .startup(let tree):
                    if logsEvents.load(ordering: .relaxed) {
                        logEvent(.warnings, .notice, Instrumentation.message(tree),
                                 metadata: WeaveEvent.startupResolutions.metadata(Instrumentation.metadata(tree)),
                                 file: #fileID, function: #function, line: #line)
                    }
                    for handler in startup.all { handler(tree) }
                case .flush(let continuation):
                    continuation.resume()
                }
            }
        }

        func log(
            _ category: LogLevel, _ level: Logger.Level, _ message: @autoclosure () -> Logger.Message,
            metadata: @autoclosure () -> Logger.Metadata, file: String, function: String, line: UInt
        ) {
            guard self.level.load(ordering: .relaxed) <= category.rawValue else { return }
            let logger = self.logger.withLock { $0 }
            logger.log(level: level, message(), metadata: metadata(), file: file, function: function, line: line)
        }

        func throttled(
            _ event: WeaveEvent, service: String, _ category: LogLevel, _ level: Logger.Level,
            _ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata, throttle: LogThrottle,
            file: String = #fileID, function: String = #function, line: UInt = #line
        ) {
            guard self.level.load(ordering: .relaxed) <= category.rawValue, logsEvents.load(ordering: .relaxed) else { return }
            let admitted = throttle.admit("\(event.messageID) \(service)") { suppressed, window in
                self.log(category, level, "Suppressed \(suppressed) more \(event.title) records of \(service) in the last \(window)",
                         metadata: WeaveEvent.suppressedRecords(suppressed, of: event, ["dependency": "\(service)"]),
                         file: file, function: function, line: line)
            }
            guard admitted else { return }
            logEvent(category, level, message(), metadata: event.metadata(metadata()), file: file, function: function, line: line)
        }

        /// Logs an event's record, or holds it back while records are held.
        func logEvent(_ category: LogLevel, _ level: Logger.Level, _ message: Logger.Message, metadata: Logger.Metadata,
                      file: String, function: String, line: UInt) {
            guard self.level.load(ordering: .relaxed) <= category.rawValue else { return }
            let record = HeldRecord(level: level, message: message, metadata: metadata, file: file, function: function, line: line)
            let kept = held.withLock { held -> Bool in
                guard held != nil else { return false }
                if held!.records.count < Instrumentation.maxHeldRecords { held!.records.append(record) } else { held!.dropped += 1 }
                return true
            }
            if !kept { record.write(to: logger.withLock { $0 }) }
        }
    }

    /// An event's record held back, to be written as it would have been.
    struct HeldRecord: Sendable {
        let level: Logger.Level
        let message: Logger.Message
        let metadata: Logger.Metadata
        let file: String, function: String, line: UInt

        func write(to logger: Logger) {
            logger.log(level: level, message, metadata: metadata, file: file, function: function, line: line)
        }
    }

    /// The most event records `holdEventLogs()` keeps; the others are counted, and the count logged.
    static let maxHeldRecords = 1_000

    /// `seconds` in milliseconds with three decimals at most: `40.095`, not `40.094764999999995`.
    static func milliseconds(_ seconds: Double) -> String {
        let micros = Int64((seconds * 1_000_000).rounded())
        let fraction = String(micros % 1_000)
        let digits = String(repeating: "0", count: 3 - fraction.count) + fraction
        let trimmed = digits.reversed().drop { $0 == "0" }.reversed()
        return "\(micros / 1_000)" + (trimmed.isEmpty ? "" : "." + String(trimmed))
    }

    /// `Slow resolution of ReportBuilder: 30.2 ms (threshold 10 ms)`, and its chain when it has one:
    /// `; chain OrderService 35.4 ms (self 5.1) → ReportBuilder 30.2 ms (self 10.1) → Database 20.1 ms
    /// (self 20.1), slowest Database` (runs and times for a chain of up to 8, the names alone past it).
    static func message(_ resolution: SlowResolution) -> Logger.Message {
        var text = "Slow resolution of \(resolution.service): \(milliseconds(resolution.duration.totalSeconds)) ms (threshold \(milliseconds(resolution.threshold.totalSeconds)) ms)"
        guard resolution.chain.count > 1 else { return "\(text)" }
        if resolution.chain.count <= 8 {
            text += "; chain " + resolution.chain.map {
                "\($0.service) \(milliseconds($0.total.totalSeconds)) ms (self \(milliseconds($0.selfTime.totalSeconds)))"
            }.joined(separator: " → ")
        } else {
            text += "; chain " + resolution.chainText
        }
        return "\(text), slowest \(resolution.chain[resolution.slowest].service)"
    }

    /// The journal's fields of a slow resolution: `WEAVE_DEPENDENCY`, `WEAVE_DURATION_USEC`,
    /// `WEAVE_THRESHOLD_USEC`, and `WEAVE_CHAIN`, `WEAVE_SELF_USEC`, `WEAVE_SLOWEST`.
    package static func metadata(_ resolution: SlowResolution) -> Logger.Metadata {
        ["dependency": "\(resolution.service)", "duration_usec": "\(resolution.duration.totalNanoseconds / 1_000)",
         "threshold_usec": "\(resolution.threshold.totalNanoseconds / 1_000)", "chain": "\(resolution.chainText)",
         "self_usec": "\(resolution.selfTime.totalNanoseconds / 1_000)", "chain_usec": "\(resolution.chainTimesText)",
         "slowest": "\(resolution.chain[resolution.slowest].service.prefix(maxUTF8Bytes: 256))"]
    }

    /// `Startup resolutions took 35.1 ms over 12 dependencies; slowest chain App → ReportBuilder →
    /// Database, slowest Database (20.1 ms self)`.
    static func message(_ tree: StartupTree) -> Logger.Message {
        var text = "Startup resolutions took \(milliseconds(tree.total.totalSeconds)) ms over \(tree.runs.count) dependencies"
        if let slowest = tree.slowest {
            text += "; slowest chain \(tree.slowestChainText), slowest \(slowest.service) (\(milliseconds(slowest.selfTime.totalSeconds)) ms self)"
        }
        return "\(text)"
    }

    /// The journal's fields of a startup: `WEAVE_DURATION_USEC` (the time spent resolving),
    /// `WEAVE_RUNS`, and `WEAVE_CHAIN`, `WEAVE_CHAIN_USEC`, `WEAVE_SELF_USEC`, `WEAVE_SLOWEST` of its
    /// slowest chain.
    package static func metadata(_ tree: StartupTree) -> Logger.Metadata {
        // Every field, empty when no run was kept: the catalog's text names them all.
        let slowest = tree.slowest
        return ["duration_usec": "\(tree.total.totalNanoseconds / 1_000)", "runs": "\(tree.runs.count)",
                "chain": "\(tree.slowestChainText)", "chain_usec": "\(tree.slowestChainTimesText)",
                "self_usec": "\((slowest?.selfTime.totalNanoseconds ?? 0) / 1_000)",
                "slowest": "\(slowest?.service.prefix(maxUTF8Bytes: 256) ?? "")"]
    }

    private enum Event: Sendable {
        case slowResolution(SlowResolution, throttle: LogThrottle)
        /// Logged within `throttle`'s limit; not logged without one.
        case resolutionError(service: String, error: ResolutionError, throttle: LogThrottle?)
        case memoryPressure
        case startup(StartupTree)
        /// Resumes the continuation once every earlier event has been delivered.
        case flush(CheckedContinuation<Void, Never>)
    }

    private let state: State
    private let stream: AsyncStream<Event>
    private let queue: AsyncStream<Event>.Continuation
    private let delivering = Atomic<Bool>(false)

    /// `logger` receives the container's records that pass `logLevel` (label `weave.di` by default).
    public init(logger: Logger = Logger(label: "weave.di"), logLevel: LogLevel = .warnings) {
        state = State(logger: logger, level: logLevel)
        (stream, queue) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        self.logLevel = logLevel
    }

    deinit {
        queue.finish()
    }

    /// Which events are logged; `.all` and `.registration` lower the logger to debug.
    public var logLevel: LogLevel {
        get { LogLevel(rawValue: state.level.load(ordering: .relaxed)) ?? .warnings }
        set {
            state.level.store(newValue.rawValue, ordering: .relaxed)
            state.logger.withLock {
                switch newValue {
                case .all, .registration: $0.logLevel = .debug
                case .warnings: $0.logLevel = .warning
                case .errors, .off: $0.logLevel = .error
                }
            }
        }
    }

    /// Whether slow resolutions and resolution errors are logged here (the default). Off while
    /// another process writes them to the journal: an `AppEndpoint` read by weave-healthd, which
    /// writes each event once, with the application's name. Hooks are called either way.
    public var logsEvents: Bool {
        get { state.logsEvents.load(ordering: .relaxed) }
        set { state.logsEvents.store(newValue, ordering: .relaxed) }
    }

    /// Holds back the records of events (slow resolutions, resolution errors, the startup tree)
    /// until `releaseEventLogs(writing:)`: for an endpoint made before startup whose socket serves
    /// only later, so that what happens meanwhile is logged once, by the daemon that will read its
    /// `/events`, or, if the socket never serves, here after all. At most `maxHeldRecords` are kept.
    public func holdEventLogs() {
        state.held.withLock { if $0 == nil { $0 = ([], 0) } }
    }

    /// Ends `holdEventLogs()`: the held records are written as they would have been when `writing`,
    /// else dropped (another process journals them).
    public func releaseEventLogs(writing: Bool) {
        guard let held = state.held.withLock({ held in defer { held = nil }; return held }), writing else { return }
        let logger = state.logger.withLock { $0 }
        for record in held.records { record.write(to: logger) }
        if held.dropped > 0 {
            logger.warning("\(held.dropped) more records of the container's events, held while its endpoint was starting, were not kept")
        }
    }

    // MARK: Hooks

    /// Calls `handler` with the service name and the duration in seconds of every resolve slower
    /// than the container's threshold. Handlers run on the delivery task, never on the resolving thread.
    @discardableResult
    public func onSlowResolution(_ handler: @escaping @Sendable (String, Double) -> Void) -> HookToken {
        state.slow.add(handler)
    }

    /// Calls `handler` with every resolve slower than the container's threshold, and why: its chain
    /// of factory runs with their totals and self times (`SlowResolution`). A slow run nested in
    /// another is reported when the outermost resolve on its thread ends, when the chain's times
    /// are known. Handlers run on the delivery task, never on the resolving thread.
    @discardableResult
    public func onSlowResolution(_ handler: @escaping @Sendable (SlowResolution) -> Void) -> HookToken {
        state.slowChains.add(handler)
    }

    /// Calls `handler` with the service name and the `ResolutionError` of: a resolve of an
    /// unregistered type through the optional APIs (`resolve`, `@Inject`), a cycle, a factory that
    /// throws, and an argument mismatch.
    @discardableResult
    public func onResolutionError(_ handler: @escaping @Sendable (String, any Error) -> Void) -> HookToken {
        state.errors.add(handler)
    }

    /// Calls `handler` after a container using this instrumentation dropped its `.cached` instances
    /// for memory pressure (`Container.relieveMemoryPressure()`, which a `WeaveMemoryPressure`
    /// monitor calls). Registering starts no watching.
    @discardableResult
    public func onMemoryPressure(_ handler: @escaping @Sendable () -> Void) -> HookToken {
        state.pressure.add(handler)
    }

    /// Calls `handler` once, with the startup tree, when a container using this instrumentation
    /// ends its startup (`Container.endStartup()`).
    @discardableResult
    public func onStartup(_ handler: @escaping @Sendable (StartupTree) -> Void) -> HookToken {
        state.startup.add(handler)
    }

    /// Waits until every event reported so far has reached its handlers (for tests and shutdown).
    public func flush() async {
        await withCheckedContinuation { enqueue(.flush($0)) }
    }

    // MARK: Events

    /// A resolve slower than its container's threshold: logged at warning level within the
    /// container's rate limit (`throttle`), and sent to the handlers.
    func slow(_ resolution: SlowResolution, throttle: LogThrottle) {
        enqueue(.slowResolution(resolution, throttle: throttle))
    }

    /// A failed resolve: logged at error level within the container's rate limit (`throttle`; nil
    /// for a miss, which its API logs as it sees fit), and sent to the handlers.
    func error(service: String, error: ResolutionError, throttle: LogThrottle?) {
        let logs = throttle != nil && state.level.load(ordering: .relaxed) <= LogLevel.errors.rawValue
        guard logs || !state.errors.isEmpty else { return }
        enqueue(.resolutionError(service: service, error: error, throttle: throttle))
    }

    func memoryPressure() {
        enqueue(.memoryPressure)
    }

    /// A container's startup ended: logged at notice level once, and sent to the handlers.
    func startupEnded(_ tree: StartupTree) {
        enqueue(.startup(tree))
    }

    private func enqueue(_ event: Event) {
        if !delivering.load(ordering: .relaxed), delivering.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            Task.detached { [state, stream] in await state.deliver(stream) }
        }
        queue.yield(event)
    }

    // MARK: Logging

    func log(
        _ category: LogLevel, _ level: Logger.Level, _ message: @autoclosure () -> Logger.Message,
        metadata: @autoclosure () -> Logger.Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        state.log(category, level, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs a record of `event` about `service` within the rate limit of `throttle` (the container's);
    /// once the limit's window ends, one record at the same level says how many were suppressed.
    func throttled(
        _ event: WeaveEvent, service: String, _ category: LogLevel, _ level: Logger.Level,
        _ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata, throttle: LogThrottle,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        state.throttled(event, service: service, category, level, message(), metadata: metadata(), throttle: throttle,
                        file: file, function: function, line: line)
    }
}
