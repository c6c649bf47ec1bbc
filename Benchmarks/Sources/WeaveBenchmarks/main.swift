import Dependencies
import Foundation
import Swinject
import WeaveDI

// Every case resolves `Service` n times. Printed: a Markdown table of median ns/op (5 runs) and ratios.

let weaveSingleton = Peers.weaveSingleton(instrumented: true)
let weaveUninstrumented = Peers.weaveSingleton(instrumented: false)
// A slow-resolution handler is installed, as the instrumentation target asks.
let slowHandler = UnifiedDI.onSlowResolution { _, _ in }
let weaveTransient = Peers.weaveTransient()
let swinjectSingleton = UncheckedBox(value: Peers.swinject(.container))
let swinjectSynchronized = UncheckedBox(value: Peers.swinject(.container).synchronize())
let swinjectTransient = UncheckedBox(value: Peers.swinject(.transient))
let mutexRegistry = Peers.mutexRegistry()

/// A class whose stored instance is read, retained and released on every call, as a resolve must.
final class Holder: Sendable {
    let service = Service()
}

@inline(never) @_optimize(none)
func load(_ holder: Holder) -> Service { holder.service }

let holder = Holder()
let weaveStruct = WeaveDI.Container()
weaveStruct.register(ServiceValue.self, scope: .singleton) { ServiceValue(value: 42) }

let singletonCases = [
    BenchmarkCase(name: "floor: load, retain and release a shared instance") { n in
        for _ in 0..<n { blackHole(load(holder)) }
    },
    BenchmarkCase(name: "WeaveDI singleton of a struct (no reference count)") { n in
        for _ in 0..<n { blackHole(weaveStruct.resolve(ServiceValue.self)) }
    },
    BenchmarkCase(name: "WeaveDI singleton") { n in
        for _ in 0..<n { blackHole(weaveSingleton.resolve(Service.self)) }
    },
    BenchmarkCase(name: "WeaveDI singleton, instrumentation off") { n in
        for _ in 0..<n { blackHole(weaveUninstrumented.resolve(Service.self)) }
    },
    BenchmarkCase(name: "Swinject .container", threadSafe: false) { n in
        for _ in 0..<n { blackHole(swinjectSingleton.value.resolve(Service.self)) }
    },
    BenchmarkCase(name: "Swinject .container synchronize()") { n in
        for _ in 0..<n { blackHole(swinjectSynchronized.value.resolve(Service.self)) }
    },
    BenchmarkCase(name: "swift-dependencies @Dependency") { n in
        for _ in 0..<n {
            @Dependency(\.benchService) var service
            blackHole(service)
        }
    },
    BenchmarkCase(name: "swift-dependencies DependencyValues._current") { n in
        for _ in 0..<n { blackHole(DependencyValues._current.benchService) }
    },
    BenchmarkCase(name: "Mutex<[ObjectIdentifier: AnyObject]>") { n in
        for _ in 0..<n { blackHole(mutexRegistry.resolve(Service.self)) }
    },
]

let transientCases = [
    BenchmarkCase(name: "allocation: Service()") { n in
        for index in 0..<n { blackHole(Service(value: index)) }
    },
    BenchmarkCase(name: "WeaveDI transient") { n in
        for _ in 0..<n { blackHole(weaveTransient.resolve(Service.self)) }
    },
    BenchmarkCase(name: "Swinject .transient", threadSafe: false) { n in
        for _ in 0..<n { blackHole(swinjectTransient.value.resolve(Service.self)) }
    },
]

func format(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
}

/// Two-thread measurements of the last `report`, by case name.
nonisolated(unsafe) var twoThreadResults: [String: Measurement] = [:]

func report(_ title: String, _ cases: [BenchmarkCase]) -> [String: Measurement] {
    print("\n### \(title)\n")
    print("| case | 1 thread ns/op | 2 threads ns/op (per thread) | 2-thread throughput ÷ 1-thread |")
    print("|---|---:|---:|---:|")
    var results: [String: Measurement] = [:]
    for benchmark in cases {
        let one = Harness.measure(benchmark, threads: 1)
        results[benchmark.name] = one
        guard benchmark.threadSafe else {
            print("| \(benchmark.name) | \(format(one.nanosPerOp)) | not thread-safe | – |")
            continue
        }
        let two = Harness.measure(benchmark, threads: 2)
        twoThreadResults[benchmark.name] = two
        print("| \(benchmark.name) | \(format(one.nanosPerOp)) | \(format(two.nanosPerOp)) | \(String(format: "%.2f×", two.throughput / one.throughput)) |")
        fflush(nil)
    }
    return results
}

/// The cases `profile` runs (a function: as a global of this file it changed how the closures were compiled).
func pathCases() -> [BenchmarkCase] { singletonPathCases + wrapperReadCases + wrapperCases + transientPathCases + bridgeCases }
/// `cases`: the names `profile` takes, one per line (Benchmarks/path_instructions.sh reads them).
if CommandLine.arguments.count == 2, CommandLine.arguments[1] == "cases" {
    for benchmark in pathCases() { print(benchmark.name) }
    exit(0)
}

/// `profile CASE [THREADS]`: runs the path or scaling case whose name starts with CASE for about 5 s on one
/// thread (or THREADS at once), for `perf record`. With `WEAVE_PROFILE_AFTER_OVERRIDE=1`, after a
/// `withContainer` call, as in `paths` (from then on `Container.current` reads the task local); with
/// `WEAVE_PROFILE_AFTER_VALUES=1`, after a `withInjectedValues` call (`InjectedValues.current` reads
/// its task local); with `WEAVE_PROFILE_BRIDGE_INSTALLED=1`, after the swift-dependencies bridge installs its source.
/// `WEAVE_PROFILE_OPERATIONS=N` runs N operations instead, for counting instructions under callgrind.
if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "profile" {
    guard let chosen = (pathCases() + ScalingBenchmark.cases).first(where: { $0.name.hasPrefix(CommandLine.arguments[2]) }) else {
        print("no case starts with \(CommandLine.arguments[2]); cases: \(pathCases().map(\.name))")
        exit(64)
    }
    _ = pathContainer // installs itself as Container.live
    // A scaling case's UnifiedDI and @Inject rows resolve `scalingContainer`, live while the section runs.
    if !pathCases().contains(where: { $0.name == chosen.name }) { Container.live = scalingContainer }
    if ProcessInfo.processInfo.environment["WEAVE_PROFILE_AFTER_OVERRIDE"] == "1" { withContainer(pathContainer) {} }
    if ProcessInfo.processInfo.environment["WEAVE_PROFILE_AFTER_VALUES"] == "1" { withInjectedValues({ _ in }) {} }
    if ProcessInfo.processInfo.environment["WEAVE_PROFILE_BRIDGE_INSTALLED"] == "1" { installDependencyOverrides() }
    let n = ProcessInfo.processInfo.environment["WEAVE_PROFILE_OPERATIONS"].flatMap { Int($0) } ?? Harness.calibrate(chosen) * 25
    let threads = CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3]) ?? 1 : 1
    let took = threads == 1 ? Harness.elapsed { chosen.run(n) } : Harness.runConcurrently(threads: threads) { _ in chosen.run(n) }
    print("\(chosen.name), \(threads) thread(s): \(format(Harness.nanos(took) / Double(n))) ns/op")
    exit(0)
}

// The application side of Benchmarks/apps_bench.py (weave-healthd aggregating applications).
if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "app" {
    try await AppsBenchmark.serve(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "render-apps" {
    await AppsBenchmark.render(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}

/// Sections to run: the arguments (`resolve`, `paths`, `scaling`, `retirement`, `oversubscribed`, `instrumentation`, `render`,
/// `protobuf`, `scrape`, `bridge`), or all of them; `--threads 1,2,4,8,16` sets the scaling section's thread counts.
var arguments = Array(CommandLine.arguments.dropFirst())
var scalingThreads = [1, 2, 4, 8, 16]
if let flag = arguments.firstIndex(of: "--threads") {
    // Every piece a count: "1,,2x" is refused, not read as "1".
    let pieces = flag + 1 < arguments.count ? arguments[flag + 1].split(separator: ",", omittingEmptySubsequences: false) : []
    let counts = pieces.compactMap { Int($0) }
    guard !counts.isEmpty, counts.count == pieces.count, counts.allSatisfy({ (1...1_024).contains($0) }) else {
        print("--threads takes thread counts from 1 to 1024 separated by commas, such as 1,2,4,8,16")
        exit(64)
    }
    scalingThreads = counts
    arguments.removeSubrange(flag...flag + 1)
}
let sections = Set(arguments)
func runs(_ section: String) -> Bool { sections.isEmpty || sections.contains(section) }

func latencyLine(_ summary: LatencySummary) -> String {
    "p50 \(format(summary.p50)) ns, p99.9 \(format(summary.p999)) ns, max \(format(summary.max / 1000)) µs " +
        "(\(summary.resolves / 1_000_000) million resolves, each timed with two clock reads)"
}

/// One row of a paired table: `benchmark` against `base` on one thread and on two, as ratios or,
/// with `overhead`, as nanoseconds over the reference.
func row(_ benchmark: BenchmarkCase, against base: BenchmarkCase, overhead: Bool = false) {
    let one = Harness.paired(benchmark, against: base, threads: 1)
    let two = Harness.paired(benchmark, against: base, threads: 2)
    func compare(_ result: (nanosPerOp: Double, baseNanosPerOp: Double, ratio: Double)) -> String {
        overhead ? "+\(format(result.nanosPerOp - result.baseNanosPerOp)) ns" : String(format: "%.2f×", result.ratio)
    }
    print("| \(benchmark.name) | \(format(one.nanosPerOp)) | \(format(two.nanosPerOp)) | \(compare(one)) | \(compare(two)) |")
    fflush(nil)
}

if runs("resolve") {
    print("WeaveDI resolve benchmarks: release build, median of \(Harness.repetitions) runs of ~\(Harness.target) each, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print("\nWeaveDI singleton and transient rows are instrumented (timings, counts, a slow-resolution handler installed) unless marked.")
    let singletons = report("Singleton resolve", singletonCases)
    let twoThreads = twoThreadResults
    let transients = report("Transient resolve", transientCases)

    let weave = singletons["WeaveDI singleton"]!.nanosPerOp
    print("\n### Ratios (peer ns/op ÷ WeaveDI ns/op, one thread, same run)\n")
    print("| peer | × slower than WeaveDI singleton |")
    print("|---|---:|")
    for name in singletonCases.map(\.name) where !name.hasPrefix("WeaveDI") && !name.hasPrefix("floor") {
        print("| \(name) | \(String(format: "%.1f×", singletons[name]!.nanosPerOp / weave)) |")
    }
    let allocation = transients["allocation: Service()"]!.nanosPerOp
    let transient = transients["WeaveDI transient"]!.nanosPerOp
    print("\nWeaveDI transient − allocation: \(format(transient - allocation)) ns/op")

    let instrumented = singletons["WeaveDI singleton"]!.nanosPerOp
    let uninstrumented = singletons["WeaveDI singleton, instrumentation off"]!.nanosPerOp
    print("Instrumented ÷ uninstrumented singleton resolve: \(String(format: "%.2f×", instrumented / uninstrumented))")

    // With two threads, a shared class instance costs at least its reference count's cache line
    // bouncing between the cores (the floor); compare per-operation times, not throughput.
    let twoWeave = twoThreads["WeaveDI singleton"]!.nanosPerOp
    let twoFloor = twoThreads["floor: load, retain and release a shared instance"]!.nanosPerOp
    print("Two threads, per operation: WeaveDI singleton \(format(twoWeave)) ns = \(String(format: "%.2f×", twoWeave / twoFloor)) the floor's \(format(twoFloor)) ns; " +
          "peers with two threads, slower than WeaveDI by: " +
          twoThreads.keys.sorted().filter { !$0.hasPrefix("WeaveDI") && !$0.hasPrefix("floor") }
              .map { "\($0) \(String(format: "%.1f×", twoThreads[$0]!.nanosPerOp / twoWeave))" }.joined(separator: ", "))
}

if runs("paths") {
    _ = pathContainer // installs itself as Container.live
    print("\n### Every resolve path (release, instrumented, same run)\n")
    print("Each row is measured in alternation with its reference, 7 rounds each (~200 ms a round), so that the noise of this shared VM hits both; the ratio is the median of the per-round ratios. References: `container.resolve(Service.self)` for the resolve rows, the holder that resolves in its initializer for the wrapper rows, the heap allocation alone for the transient rows (shown as ns over it).\n")
    print("| path | 1 thread ns/op | 2 threads ns/op | 1 thread vs reference | 2 threads vs reference |")
    print("|---|---:|---:|---:|---:|")
    for benchmark in singletonPathCases { row(benchmark, against: singletonPathCases[0]) }
    for benchmark in wrapperReadCases { row(benchmark, against: singletonPathCases[0]) }
    for benchmark in wrapperCases.dropFirst() { row(benchmark, against: wrapperCases[0]) }
    for benchmark in transientPathCases.dropFirst() { row(benchmark, against: transientPathCases[0], overhead: true) }

    // Two threads returning one shared class instance are bound by its reference count's cache line,
    // whose cost on this VM moves 2–5× with where the host runs the two vCPUs: so pair every figure.
    print("\n#### Two threads, per operation, paired: the singleton against the floor, the peers against the singleton\n")
    print("| case | reference | ns/op | reference ns/op | ratio |")
    print("|---|---|---:|---:|---:|")
    let floor = singletonCases.first { $0.name.hasPrefix("floor") }!
    let weave = singletonCases.first { $0.name == "WeaveDI singleton" }!
    let pairs = [(weave, floor)] + singletonCases.filter { $0.threadSafe && !$0.name.hasPrefix("WeaveDI") && !$0.name.hasPrefix("floor") }.map { ($0, weave) }
    for (benchmark, reference) in pairs {
        let result = Harness.paired(benchmark, against: reference, threads: 2)
        print("| \(benchmark.name) | \(reference.name) | \(format(result.nanosPerOp)) | \(format(result.baseNanosPerOp)) | \(String(format: "%.2f×", result.ratio)) |")
        fflush(nil)
    }
}

if runs("scaling") {
    ScalingBenchmark.run(threadCounts: scalingThreads)
}

if runs("retirement") {
    RetirementBenchmark.report()
}

if runs("oversubscribed") {
    let result = OversubscribedBenchmark.run()
    let control = OversubscribedBenchmark.run(control: true)
    print("\n### Oversubscribed: \(result.threads) threads on \(ProcessInfo.processInfo.activeProcessorCount) cores for \(String(format: "%.1f", result.seconds)) s each\n")
    print("WeaveDI: mixed singleton, transient, named singleton and named transient resolves, each timed, with \(result.registrations) registrations meanwhile (one a millisecond). Control: the same threads and loop with no container, each operation a load, retain and release of a shared object (the floor row). \"Clean\" windows are runs of 64 operations with no involuntary context switch of the thread; hypervisor steal is invisible to that count, so it is given per run.\n")
    print("| run | samples | operations | p50 | p99.9 | p99.99 | max | over 1 ms | preempted windows | steal |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (name, run) in [("WeaveDI", result), ("control (no container)", control)] {
        for (label, distribution) in [("clean windows", run.clean), ("all", run.all)] {
            let overOneMillisecond = distribution.over.count
            print("| \(name) | \(label) | \(distribution.total) | \(distribution.quantile(0.5)) ns | \(distribution.quantile(0.999)) ns | " +
                  "\(format(Double(distribution.quantile(0.9999)) / 1000)) µs | \(format(Double(distribution.maximum) / 1000)) µs | " +
                  "\(overOneMillisecond) | \(run.preemptedWindows) of \(run.windows) | \(String(format: "%.2f", run.stealSeconds)) s |")
        }
    }
    print("\nSlow resolutions counted at the 10 ms threshold (WeaveDI run): \(result.slowResolutions).")
}

if runs("instrumentation") {
    print("\n### Statistics snapshots and health rounds\n")
    let (snapshotContainer, snapshotMillis) = InstrumentationBenchmarks.snapshotMillis(keys: 1_000)
    print("- `statistics()` of 1,000 keys: median \(String(format: "%.3f", snapshotMillis)) ms (51 runs)")
    let (duringSnapshots, snapshots) = InstrumentationBenchmarks.resolveLatencyDuringSnapshots(snapshotContainer)
    print("- singleton resolves on one thread for 2 s while another takes snapshots in a loop (\(snapshots) snapshots): " +
          latencyLine(duringSnapshots))
    let round = await InstrumentationBenchmarks.healthRound(count: 1_000, hanging: 10, timeout: .milliseconds(500))
    print("- health round of 1,000 checks, 10 hanging forever, timeout 500 ms: \(String(format: "%.1f", round)) ms (\(String(format: "%.1f", round - 500)) ms over the timeout)")
    let (duringRendering, renders) = InstrumentationBenchmarks.resolveLatencyDuringRendering(snapshotContainer)
    print("- singleton resolves on one thread for 2 s while another renders /metrics of 1,000 services in a loop (\(renders) renders): " +
          latencyLine(duringRendering))
}

if runs("render") {
    print("\n### /metrics render cost by number of services (text format; each service also has a health check)\n")
    print("| services | series | render ms (median of 31) | body bytes |")
    print("|---:|---:|---:|---:|")
    for keys in [10, 100, 1_000, 10_000] {
        let result = InstrumentationBenchmarks.render(keys: keys)
        print("| \(keys) | \(result.series) | \(String(format: "%.3f", result.millis)) | \(result.bytes) |")
        fflush(nil)
    }
}

if runs("protobuf") {
    print("\n### The protobuf exposition of 1,000 services (each with a health check), default buckets\n")
    print("| operation | median ms of 31 | bytes |")
    print("|---|---:|---:|")
    for row in try ProtobufBenchmark.run(keys: 1_000) {
        print("| \(row.name) | \(String(format: "%.3f", row.millis)) | \(row.bytes) |")
    }
    fflush(nil)
}

if runs("scrape") {
    print("\n### Resolves while wrk scrapes /metrics\n")
    let scrape = try await ScrapeBenchmark.run()
    print("- `wrk -t 2 -c 4 -d 10s` on /metrics of 1,000 services served by WeaveHealthServer in this process: " +
          "\(scrape.scrapesPerSecond); \(scrape.scrapeLatency) (avg, stdev, max)")
    print("- meanwhile, singleton resolves on one thread for 8 s: " + latencyLine(scrape.latency))
}

// Last: the bridge's source of overrides, once installed, stays for the rest of the process.
if runs("bridge") {
    _ = pathContainer // installs itself as Container.live; its Service singleton serves the bridged key
    print("\n### The swift-dependencies bridge (WeaveDependencies), paired with `container.resolve(Service.self)`\n")
    print("| path | 1 thread ns/op | 2 threads ns/op | 1 thread vs reference | 2 threads vs reference |")
    print("|---|---:|---:|---:|---:|")
    let reference = singletonPathCases[0]
    row(singletonPathCases.first { $0.name == "InjectedValues.current.benchService" }!, against: reference)
    row(bridgeCases[0], against: reference)
    row(bridgeCases[1], against: reference)
    installDependencyOverrides()
    row(bridgeCases[2], against: reference)
    row(bridgeCases[3], against: reference)
    row(bridgeCases[0], against: reference)
}
slowHandler.cancel()
