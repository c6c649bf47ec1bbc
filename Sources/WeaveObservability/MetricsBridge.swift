public import CoreMetrics
import Synchronization
import WeaveDI
import WeaveSupport

/// Mirrors a container's figures into swift-metrics (`MetricsSystem`), so users of other backends
/// (StatsD, OpenTelemetry) get the same counters and timers. Prometheus users need not: the
/// exporter reads `Container.statistics()` directly. The families keep the exporter's names, so a
/// swift-prometheus registry fed by this bridge and served beside the exporter would repeat them:
/// serve such a registry through `ExpositionText`, which leaves them out.
///
/// Timers receive every timed resolve; counters (`weave_resolutions_total`,
/// `weave_instances_created_total`, `weave_resolution_errors_total{kind}`,
/// `weave_slow_resolutions_total`, `weave_cache_evictions_total`,
/// `weave_memory_pressure_events_total`) advance by what changed at each `update()`.
///
/// A dependency's first timing does not wait on the resolving thread while the backend makes its
/// timer: it is held until a task apart has (`update()` records everything held before it).
public final class MetricsBridge: Sendable {
    public let container: Container
    private let factory: any MetricsFactory
    private let previous = Locked<[String: UInt64]>([:])
    private let timers: HeldTimers

    /// Starts forwarding timings of `container` to `factory` (by default the bootstrapped
    /// `MetricsSystem`); stop with `cancel()`.
    public init(container: Container, factory: any MetricsFactory = MetricsSystem.factory) {
        self.container = container
        self.factory = factory
        timers = HeldTimers(factory: factory)
        container.timingObservers.withLock { [timers] observers in
            observers[ObjectIdentifier(self)] = { service, ranFactory, nanos in
                timers.record(Int64(clamping: nanos), service: service, ranFactory: ranFactory)
            }
            container.hasTimingObservers.store(true, ordering: .relaxed)
        }
    }

    /// Stops forwarding timings.
    public func cancel() {
        container.timingObservers.withLock { observers in
            observers[ObjectIdentifier(self)] = nil
            container.hasTimingObservers.store(!observers.isEmpty, ordering: .relaxed)
        }
    }

    /// Advances the counters by what changed since the last call, and records the timings still
    /// held for a timer not yet made.
    public func update() {
        timers.makeHeld()
        let statistics = container.statistics()
        var figures: [(label: String, dimensions: [(String, String)], value: UInt64)] = []
        for service in statistics.services {
            let dimensions = [("dependency", service.service)]
            figures.append(("weave_resolutions_total", dimensions, service.resolutions))
            figures.append(("weave_instances_created_total", dimensions, service.instancesCreated))
            figures.append(("weave_slow_resolutions_total", dimensions, service.slowResolutions))
            for (kind, count) in service.exportedErrors {
                figures.append(("weave_resolution_errors_total", dimensions + [("kind", kind.rawValue)], count))
            }
        }
        figures.append(("weave_cache_evictions_total", [], statistics.cachedEvictions))
        figures.append(("weave_memory_pressure_events_total", [], statistics.memoryPressureEvents))
        let deltas: [(String, [(String, String)], Int64)] = previous.withLock { seen in
            figures.compactMap { label, dimensions, value in
                let key = ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{0}")
                // A counter is made at its first figure, 0 included, so that the backend has it at 0.
                let isNew = seen[key] == nil
                let delta = value &- (seen[key] ?? 0)
                seen[key] = value
                return delta > 0 || isNew ? (label, dimensions, Int64(clamping: delta)) : nil
            }
        }
        for (label, dimensions, delta) in deltas {
            let counter = Counter(label: label, dimensions: dimensions, factory: factory)
            if delta > 0 { counter.increment(by: delta) }
        }
    }

    /// Calls `update()` every `interval` until the task is cancelled.
    public func run(every interval: Duration = .seconds(10)) async {
        while !Task.isCancelled {
            update()
            do { try await Task.sleep(for: interval) } catch { return }
        }
        update()
    }
}
