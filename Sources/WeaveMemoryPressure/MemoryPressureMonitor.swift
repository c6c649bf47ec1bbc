public import Logging
public import WeaveSupport

/// Where memory-pressure notifications come from.
public enum MemoryPressureSource: Sendable, Equatable, CustomStringConvertible {
    /// systemd's `$MEMORY_PRESSURE_WATCH` (a PSI file with the trigger from `$MEMORY_PRESSURE_WRITE`, a FIFO or a socket).
    case systemdWatch(path: String)
    /// A PSI trigger on a pressure file (the cgroup's `memory.pressure`, or `/proc/pressure/memory`).
    case psiTrigger(path: String, trigger: String)
    /// `avg10` of a pressure file read on an interval, for when no trigger can be created.
    case psiPolling(path: String, threshold: Double)
    /// No source could be used.
    case unavailable(reason: String)

    public var description: String {
        switch self {
        case .systemdWatch(let path): return "systemd watch \(path)"
        case .psiTrigger(let path, let trigger): return "PSI trigger '\(trigger)' on \(path)"
        case .psiPolling(let path, let threshold): return "polling avg10 ≥ \(threshold) of \(path)"
        case .unavailable(let reason): return "unavailable: \(reason)"
        }
    }
}

/// One memory-pressure notification, as `onPressure` handlers receive it.
public struct MemoryPressureEvent: Sendable {
    /// What reported it.
    public let source: MemoryPressureSource
    /// The PSI averages at the time, when a pressure file could be read.
    public let pressure: PressureStallInformation?
    /// What the monitor's `relieve` evicted in response (a container's `.cached` instances).
    public let evictions: Int
}

/// How the monitor picks and reads its source.
public struct MemoryPressureConfiguration: Sendable {
    /// The PSI trigger: stall type, threshold and window in microseconds.
    public var trigger = "some 150000 1000000"
    /// Interval of the `avg10` fallback.
    public var pollInterval: Duration = .seconds(2)
    /// `avg10` (percent) at or above which the fallback reports pressure.
    public var avg10Threshold = 10.0
    /// The environment to read `MEMORY_PRESSURE_WATCH`/`MEMORY_PRESSURE_WRITE` from; `nil` is the process's.
    public var environment: [String: String]?
    public var procPressurePath = "/proc/pressure/memory"
    public var cgroupRoot = "/sys/fs/cgroup"
    public var selfCgroupPath = "/proc/self/cgroup"

    public init() {}
}

/// Watches memory pressure on a thread of its own, from `start()` to `stop()`. On pressure it calls
/// its `relieve` (for a container, `relieveMemoryPressure()`, which evicts its `.cached` instances,
/// counts the event and runs its `onMemoryPressure` handlers), then its own `onPressure` handlers.
/// Sources, in order: systemd's `$MEMORY_PRESSURE_WATCH`; a PSI trigger on the cgroup's
/// `memory.pressure`, then on `/proc/pressure/memory`; polling `avg10`; else it reports once, at
/// info level, that monitoring is unavailable. It never crashes.
public final class MemoryPressureMonitor: Sendable {
    private let configuration: MemoryPressureConfiguration
    private let relieve: @Sendable () -> Int
    private let logger: Logger
    private let state = Locked<(source: MemoryPressureSource?, wakeFD: Int32?)>((nil, nil))
    private let handlers = HookList<@Sendable (MemoryPressureEvent) -> Void>()

    /// `relieve` runs at each notification, on the watching thread, and returns how many instances
    /// it evicted: `{ container.relieveMemoryPressure() }` (a program that replaces its container on
    /// reload relieves the current one).
    public init(configuration: MemoryPressureConfiguration = .init(), logger: Logger = Logger(label: "weave.pressure"),
                relieve: @escaping @Sendable () -> Int) {
        self.configuration = configuration
        self.logger = logger
        self.relieve = relieve
    }

    /// Calls `handler` with each notification's details (source, PSI averages, evictions), on the
    /// watching thread, after `relieve` ran.
    @discardableResult
    public func onPressure(_ handler: @escaping @Sendable (MemoryPressureEvent) -> Void) -> HookToken {
        handlers.add(handler)
    }

    /// The source in use, once started.
    public var source: MemoryPressureSource? { state.withLock { $0.source } }

    /// Starts watching (once; later calls return the same source).
    @discardableResult
    public func start() -> MemoryPressureSource {
        state.withLock { state in
            if let source = state.source { return source }
            let (source, watch) = openSource()
            state.source = source
            guard let watch else {
                logger.info("Memory-pressure monitoring is unavailable: \(source)", metadata: ["source": "\(source)"])
                return source
            }
            var pipeFDs: [Int32] = [0, 0]
            guard pipe(&pipeFDs) == 0 else {
                watch.release()
                state.source = .unavailable(reason: "pipe: \(SystemError.text(errno))")
                return state.source!
            }
            state.wakeFD = pipeFDs[1]
            let loop = WatchLoop(monitor: self, watch: watch, source: source, wakeFD: pipeFDs[0],
                                 detailsPath: configuration.procPressurePath, logger: logger)
            loop.startThread()
            logger.info("Watching memory pressure: \(source)", metadata: ["source": "\(source)"])
            return source
        }
    }

    /// Stops the watching thread; `start()` may be called again afterwards.
    public func stop() {
        state.withLock { state in
            if let wake = state.wakeFD {
                var byte: UInt8 = 1
                _ = write(wake, &byte, 1)
                close(wake)
            }
            state = (nil, nil)
        }
    }

    /// Evicts, counts and notifies, as for a real notification (used by the watch loop).
    func pressureReported(by source: MemoryPressureSource, pressure: PressureStallInformation?) {
        let evicted = relieve()
        logger.warning("Memory pressure (\(source)): evicted \(evicted) cached instances",
                       metadata: WeaveEvent.memoryPressure.metadata(["source": "\(source)", "evictions": "\(evicted)",
                                                                     "psi_some_avg10": "\(pressure?.some.avg10 ?? -1)"]))
        let event = MemoryPressureEvent(source: source, pressure: pressure, evictions: evicted)
        for handler in handlers.all { handler(event) }
    }

    // MARK: Choosing the source

    private func environment(_ name: String) -> String? {
        if let environment = configuration.environment { return environment[name] }
        return getenv(name).map { String(cString: $0) }
    }

    private func openSource() -> (MemoryPressureSource, PressureWatch?) {
        if let path = environment("MEMORY_PRESSURE_WATCH"), !path.isEmpty {
            if path == "/dev/null" { return (.unavailable(reason: "MEMORY_PRESSURE_WATCH=/dev/null turns it off"), nil) }
            do {
                let write = environment("MEMORY_PRESSURE_WRITE").flatMap(Base64.decode)
                return (.systemdWatch(path: path), try PressureWatch.systemd(path: path, write: write))
            } catch {
                return (.unavailable(reason: "MEMORY_PRESSURE_WATCH=\(path): \(error)"), nil)
            }
        }
        var candidates: [String] = []
        if let cgroup = cgroupPressurePath() { candidates.append(cgroup) }
        candidates.append(configuration.procPressurePath)
        var failures: [String] = []
        for path in candidates {
            do {
                return (.psiTrigger(path: path, trigger: configuration.trigger),
                        try PressureWatch.trigger(path: path, trigger: configuration.trigger))
            } catch {
                failures.append("\(path): \(error)")
            }
        }
        for path in candidates where access(path, R_OK) == 0 {
            if let text = readTextFile(path), (try? PressureStallInformation.parse(text)) != nil {
                return (.psiPolling(path: path, threshold: configuration.avg10Threshold),
                        .polling(path: path, interval: configuration.pollInterval, threshold: configuration.avg10Threshold))
            }
        }
        return (.unavailable(reason: failures.joined(separator: "; ")), nil)
    }

    /// `<cgroupRoot>/<own cgroup v2 path>/memory.pressure`, when it exists.
    private func cgroupPressurePath() -> String? {
        guard let text = readTextFile(configuration.selfCgroupPath) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let relative = line.dropFirst(3)
            let path = configuration.cgroupRoot + (relative == "/" ? "" : String(relative)) + "/memory.pressure"
            return access(path, F_OK) == 0 ? path : nil
        }
        return nil
    }
}
