import CoreMetrics
import WeaveSupport

/// `MetricsBridge`'s timers, one per dependency and path. A backend may take milliseconds to make
/// a timer (swift-prometheus builds its histogram), so a dependency's first timing does not wait for
/// it on the resolving thread: it is held, and a task apart makes the timer and records what was
/// held. Holds no reference to the container (whose observer holds this).
final class HeldTimers: Sendable {
    private let factory: any MetricsFactory
    private let timers = Locked<[Key: State]>([:])
    /// Taken by whoever makes the held timers, so that each is made once.
    private let making = Locked(())

    /// The timings held for one timer at most; past them, the resolving thread makes it itself (a
    /// backend that takes that long to make one is waited for, and no timing is dropped).
    static let maxHeld = 4_096

    private struct Key: Hashable, Sendable {
        let service: String
        let ranFactory: Bool
    }

    /// A timer made, or the timings held until it is.
    private enum State: Sendable {
        case made(CoreMetrics.Timer)
        case held([Int64])
    }

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// Records one timing in its timer, or holds it until the timer is made.
    func record(_ nanos: Int64, service: String, ranFactory: Bool) {
        enum Next { case record(CoreMetrics.Timer), makeApart, makeHere, wait }
        let key = Key(service: service, ranFactory: ranFactory)
        let next = timers.withLock { timers -> Next in
            switch timers[key] {
            case .made(let timer)?:
                return .record(timer)
            case .held(var held)?:
                held.append(nanos)
                timers[key] = .held(held)
                return held.count > Self.maxHeld ? .makeHere : .wait
            case nil:
                timers[key] = .held([nanos])
                return .makeApart
            }
        }
        switch next {
        case .record(let timer): timer.recordNanoseconds(nanos)
        case .makeApart: Task.detached { [self] in makeHeld() }
        case .makeHere: makeHeld()
        case .wait: break
        }
    }

    /// Makes every timer whose timings are held, and records them: when it returns, every timing
    /// recorded before it was called is in its timer.
    func makeHeld() {
        making.withLock { _ in
            let keys = timers.withLock { timers in timers.compactMap { if case .held = $0.value { $0.key } else { nil } } }
            for key in keys {
                let timer = CoreMetrics.Timer(label: "weave_resolve_duration_seconds",
                                              dimensions: [("dependency", key.service), ("path", key.ranFactory ? "factory" : "cached_hit")],
                                              preferredDisplayUnit: .seconds, factory: factory)
                let held = timers.withLock { timers -> [Int64] in
                    defer { timers[key] = .made(timer) }
                    if case .held(let held)? = timers[key] { return held }
                    return []
                }
                for nanos in held { timer.recordNanoseconds(nanos) }
            }
        }
    }
}
