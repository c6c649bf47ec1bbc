import WeaveDI
import WeaveHealth
import WeaveSupport

/// A bounded, numbered log of one application's container events: slow resolutions, resolution
/// errors, memory-pressure evictions and health transitions, the newest `capacity` kept. It is
/// what an application's `/events` serves, and what weave-healthd reads every health interval to
/// write the application's events to the host's journal, resuming after the last number it saw.
///
/// Numbers start at 1 and never repeat within one log; `started` tells one log (one run of the
/// application) from the next, so a reader knows when numbering started again.
public final class ContainerEventLog: Sendable {
    /// One event. Its fields are the journal's `WEAVE_*` fields in lower case.
    public struct Event: Sendable, Equatable {
        public enum Kind: String, Sendable, CaseIterable {
            case slowResolution = "slow_resolution"
            case resolutionError = "resolution_error"
            case memoryPressure = "memory_pressure"
            case healthTransition = "health_transition"
            case startup
        }

        public let sequence: UInt64
        /// Seconds since the Unix epoch.
        public let time: Double
        public let kind: Kind
        /// Those its kind carries (`Kind.fields`, in `ContainerEventPage.swift`).
        public let fields: [String: String]
    }

    /// The events kept; older ones are dropped (a reader that fell behind is told how many).
    public let capacity: Int
    /// When this log began, in seconds since the Unix epoch.
    public let started: Double
    /// Field values are cut to this many bytes (an error's description can be long).
    public static let maxFieldBytes = 512
    private let state: Locked<(ring: [Event], next: UInt64, startup: Bool)>
    /// Fired after each append, which a watching `/events` waits on.
    public let appended = ChangeSignal()

    public init(capacity: Int = 1_024) {
        precondition(capacity >= 1, "an event log keeps at least one event")
        self.capacity = capacity
        started = WallClock.now()
        state = Locked(([], 1, false))
    }

    /// Appends an event, numbered after the last; drops the oldest beyond `capacity`. `time`: when
    /// it happened (seconds since the Unix epoch), by default now. A log takes one `.startup` event, the first.
    public func append(_ kind: Event.Kind, _ fields: [String: String], at time: Double = WallClock.now()) {
        let cut = fields.mapValues { $0.prefix(maxUTF8Bytes: Self.maxFieldBytes) }
        let added = state.withLock { state -> Bool in
            if kind == .startup {
                guard !state.startup else { return false }
                state.startup = true
            }
            if state.ring.count == capacity { state.ring.removeFirst(capacity / 8 + 1) }
            state.ring.append(Event(sequence: state.next, time: time, kind: kind, fields: cut))
            state.next += 1
            return true
        }
        if added { appended.signal() }
    }

    /// The number of the newest event; 0 before the first.
    public var newest: UInt64 { state.withLock { $0.next - 1 } }

    /// The events numbered after `after`, oldest first, at most `limit`; with the first number still
    /// kept and the next to be given.
    public func events(after: UInt64, limit: Int) -> (events: [Event], first: UInt64, next: UInt64) {
        state.withLock { state in
            let first = state.ring.first?.sequence ?? state.next
            let start = after < first ? 0 : Int(min(after - first + 1, UInt64(state.ring.count)))
            return (Array(state.ring[start...].prefix(max(0, limit))), first, state.next)
        }
    }

    private func appendStartup(_ tree: StartupTree) {
        append(.startup, Instrumentation.metadata(tree).mapValues { "\($0)" }, at: tree.endedAt ?? WallClock.now())
    }

    /// Events read at most per `/events` request.
    public static let maxPerRequest = 256

    // MARK: Feeding it

    /// Records `container`'s slow resolutions, resolution errors, memory-pressure evictions and its
    /// startup (once, even when it ended before this call) until the returned tokens are cancelled.
    /// An `AppEndpoint` calls it when it is made, so the resolutions made after that are in the log.
    public func recordEvents(of container: Container) -> [HookToken] {
        let instrumentation = container.instrumentation
        let tokens = [
            instrumentation.onSlowResolution { [self] (resolution: SlowResolution) in
                append(.slowResolution, Instrumentation.metadata(resolution).mapValues { "\($0)" })
            },
            instrumentation.onResolutionError { [self] service, error in
                let kind = (error as? ResolutionError)?.kind.rawValue ?? "unknown"
                append(.resolutionError, ["dependency": service, "error_kind": kind, "error": "\(error)"])
            },
            instrumentation.onMemoryPressure { [self] in append(.memoryPressure, [:]) },
            instrumentation.onStartup { [self] tree in appendStartup(tree) },
        ]
        let startup = container.startupTree
        if startup.ended { appendStartup(startup) }
        return tokens
    }

    /// Records `monitor`'s transitions until the calling task is cancelled (an `AppEndpoint` runs it
    /// in its `run()`).
    public func recordTransitions(of monitor: HealthMonitor) async {
        for await transition in await monitor.transitions() {
            // A check's first result is its start, not a change.
            guard let from = transition.from else { continue }
            var fields = ["check": transition.name, "state_from": from.rawValue, "state_to": transition.to.state.rawValue]
            if let reason = transition.to.reason { fields["reason"] = reason }
            append(.healthTransition, fields)
        }
    }
}
