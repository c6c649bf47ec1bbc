import Foundation
import Synchronization
import WeaveDI

// How throughput grows with threads: each resolve path and the floors that bound it, measured in
// one run. Threads are released together and each resolves as fast as it can until told to stop;
// the figure is the operations of all threads over the wall time, the median of three runs.

/// A value read through a call the optimizer cannot remove: the least a value-type singleton costs.
struct ValueHolder: Sendable {
    let value = ServiceValue(value: 42)
}

@inline(never) @_optimize(none)
func readValue(_ holder: ValueHolder) -> ServiceValue { holder.value }

/// A retain and a release of `object` that the optimizer cannot pair away: the least a container
/// handing one shared class instance to each caller costs.
@inline(never) @_optimize(none)
func retainAndRelease(_ object: Unmanaged<Service>) {
    _ = object.retain()
    object.release()
}

let valueHolder = ValueHolder()

/// A service whose factory captures state, as real factories do (a non-null closure context).
final class Configured: Sendable {
    let port: Int
    init(port: Int) { self.port = port }
}

/// Made by a factory that resolves a dependency: the container records the edge.
final class Handler: Sendable {
    let value: Int
    init(value: Int) { self.value = value }
}

/// One container with a registration for each path the scaling table measures; `Container.live`
/// while the section runs, so `UnifiedDI` and `@Inject` resolve it too.
let scalingContainer: WeaveDI.Container = {
    let container = WeaveDI.Container()
    container.register(Service.self, scope: .singleton) { Service() }
    container.register(ServiceValue.self, scope: .singleton) { ServiceValue(value: 42) }
    container.register(orderServiceName, Service.self, scope: .singleton) { Service(value: 1) }
    container.register(orderServiceName, ServiceValue.self, scope: .singleton) { ServiceValue(value: 1) }
    container.register(Widget.self) { makeWidget(7) }
    let port = 8080
    container.register(Configured.self) { Configured(port: port) }
    container.register(Tagged.self, scope: .cached) { Tagged(tag: 1) }
    // Captured strongly, as factories usually capture their container (this one lives for the whole
    // process): an `unowned` or `weak` capture is made strong on every run, which writes the
    // container's reference count.
    container.register(Handler.self) { Handler(value: container.resolve(ServiceValue.self)!.value) }
    // A thread preempted between a sampled hit's two clock reads is a slow resolution on a VM with
    // more threads than cores: a threshold no preemption reaches keeps the table free of their logs.
    container.instrumentationSettings.slowResolutionThreshold = .seconds(10)
    return container
}()

enum ScalingBenchmark {
    /// The rows: floors first, then WeaveDI's paths, then peers.
    static var cases: [BenchmarkCase] {
        let container = scalingContainer
        return [
            BenchmarkCase(name: "floor: allocation of the service (a transient's limit)") { n in
                for index in 0..<n { blackHole(makeWidget(index)) }
            },
            BenchmarkCase(name: "floor: a value read (a value singleton's limit)") { n in
                for _ in 0..<n { blackHole(readValue(valueHolder)) }
            },
            BenchmarkCase(name: "floor: retain and release of one shared object") { n in
                let shared = Unmanaged.passUnretained(holder.service)
                for _ in 0..<n { retainAndRelease(shared) }
            },
            BenchmarkCase(name: "container.resolve, class singleton", counts: ["Service"]) { n in
                for _ in 0..<n { blackHole(container.resolve(Service.self)) }
            },
            BenchmarkCase(name: "container.resolve, value-type singleton", counts: ["ServiceValue"]) { n in
                for _ in 0..<n { blackHole(container.resolve(ServiceValue.self)) }
            },
            BenchmarkCase(name: "named singleton", counts: ["BasicOrderService (Service)"]) { n in
                for _ in 0..<n { blackHole(container.resolve(orderServiceName, Service.self)) }
            },
            BenchmarkCase(name: "named value-type singleton", counts: ["BasicOrderService (ServiceValue)"]) { n in
                for _ in 0..<n { blackHole(container.resolve(orderServiceName, ServiceValue.self)) }
            },
            BenchmarkCase(name: "UnifiedDI.resolve, class singleton", counts: ["Service"]) { n in
                for _ in 0..<n { blackHole(UnifiedDI.resolve(Service.self)) }
            },
            BenchmarkCase(name: "UnifiedDI.resolve, value-type singleton", counts: ["ServiceValue"]) { n in
                for _ in 0..<n { blackHole(UnifiedDI.resolve(ServiceValue.self)) }
            },
            BenchmarkCase(name: "@Inject: new holder, one read", counts: ["Service"]) { n in
                for _ in 0..<n { blackHole(InjectHolder().service) }
            },
            BenchmarkCase(name: "cached scope", counts: ["Tagged"]) { n in
                for _ in 0..<n { blackHole(container.resolve(Tagged.self)) }
            },
            BenchmarkCase(name: "transient", counts: ["Widget"]) { n in
                for _ in 0..<n { blackHole(container.resolve(Widget.self)) }
            },
            BenchmarkCase(name: "transient, factory capturing state", counts: ["Configured"]) { n in
                for _ in 0..<n { blackHole(container.resolve(Configured.self)) }
            },
            BenchmarkCase(name: "transient whose factory resolves a value-type singleton", counts: ["Handler", "ServiceValue"]) { n in
                for _ in 0..<n { blackHole(container.resolve(Handler.self)) }
            },
        ] + singletonCases.filter { peers.contains($0.name) }
    }

    /// The thread-safe peers of the singleton table.
    static let peers: Set = ["Swinject .container synchronize()", "swift-dependencies @Dependency", "Mutex<[ObjectIdentifier: AnyObject]>"]

    /// Runs for about `duration`: operations per second of all `threads` together, and how many.
    static func throughput(_ benchmark: BenchmarkCase, threads: Int, duration: Duration = .milliseconds(250))
        -> (perSecond: Double, operations: Int) {
        let stop = Atomic<Bool>(false)
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: threads * 16) // a cache line each
        defer { counts.deallocate() }
        let slots = UncheckedBox(value: counts)
        let batch = 256
        let took = Harness.runConcurrently(threads: threads) { index in
            var done = 0
            // Reads only: the flag is written once, at the end.
            while !stop.load(ordering: .relaxed) {
                benchmark.run(batch)
                done += batch
            }
            slots.value[index * 16] = done
        } whileRunning: {
            Thread.sleep(forTimeInterval: Harness.nanos(duration) / 1e9)
            stop.store(true, ordering: .relaxed)
        }
        let operations = (0..<threads).reduce(0) { $0 + counts[$1 * 16] }
        return (Double(operations) / (Harness.nanos(took) / 1e9), operations)
    }

    /// The resolves `scalingContainer` has counted, by service.
    static func resolutions() -> [String: UInt64] {
        Dictionary(scalingContainer.statistics().services.map { ($0.service, $0.resolutions) }) { $0 + $1 }
    }

    /// The table: Mops/s at each thread count (the median of three runs), and each count's ÷ the first.
    static func run(threadCounts: [Int]) {
        let live = Container.live
        Container.live = scalingContainer
        defer { Container.live = live }
        print("\n### Scaling: all threads together, Mops/s (median of 3 runs of ~0.25 s), \(ProcessInfo.processInfo.activeProcessorCount) cores\n")
        let counts = threadCounts.map(String.init).joined(separator: " | ")
        let ratios = threadCounts.dropFirst().map { "\($0) ÷ \(threadCounts[0])" }.joined(separator: " | ")
        print("| case | \(counts) | \(ratios) |")
        print("|---|" + String(repeating: "---:|", count: 2 * threadCounts.count - 1))
        let before = resolutions()
        var expected: [String: Int] = [:]
        for benchmark in cases {
            let warmUp = 10_000
            benchmark.run(warmUp) // metadata, first creations
            var operations = warmUp
            let figures = threadCounts.map { threads in
                let runs = (0..<3).map { _ in throughput(benchmark, threads: threads) }
                operations += runs.reduce(0) { $0 + $1.operations }
                return runs.map(\.perSecond).sorted()[1] / 1e6
            }
            for service in benchmark.counts { expected[service, default: 0] += operations }
            let cells = figures.map { $0 >= 100 ? String(format: "%.0f", $0) : String(format: "%.1f", $0) }
                + figures.dropFirst().map { String(format: "%.2f×", $0 / figures[0]) }
            print("| \(benchmark.name) | \(cells.joined(separator: " | ")) |")
            fflush(nil)
        }
        // Every resolve of the section, on any number of threads, is counted once: the statistics
        // grew by exactly the operations the threads report.
        let after = resolutions()
        let counted = expected.keys.map { ($0, after[$0, default: 0] - before[$0, default: 0]) }
        let wrong = counted.filter { UInt64(expected[$0.0]!) != $0.1 }.sorted { $0.0 < $1.0 }
        print("\nCounts: \(expected.values.reduce(0, +)) resolves of \(expected.count) services on up to \(threadCounts.max()!) threads; " +
              (wrong.isEmpty ? "`statistics()` counted each exactly." : "**counted wrong** for \(wrong.map { "\($0.0): \($0.1) of \(expected[$0.0]!)" })"))
    }
}
