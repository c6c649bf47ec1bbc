import Foundation
import Synchronization
import WeaveDI

/// More resolving threads than cores: each thread times every resolve (mixed singleton, transient,
/// named singleton and named transient) while the first also registers a new key every millisecond.
///
/// A thread the scheduler preempts in the middle of a resolve shows a latency of a whole time slice,
/// which says nothing about the container. So each thread reads its involuntary context-switch count
/// (`getrusage(RUSAGE_THREAD)`) every 64 resolves: a window of 64 without one is "clean", and its
/// samples measure the container alone, waits for a lock included (a thread that parks on a lock
/// switches voluntarily, which keeps its window clean). Windows with a preemption are reported apart.
enum OversubscribedBenchmark {
    struct Result {
        let threads: Int
        let seconds: Double
        let clean: Distribution
        let all: Distribution
        let preemptedWindows: Int
        let windows: Int
        let registrations: Int
        /// Slow resolutions the container counted at its 10 ms threshold.
        let slowResolutions: UInt64
        /// Seconds all CPUs spent stolen by the hypervisor during the run (/proc/stat), which no
        /// context-switch count inside this VM sees.
        let stealSeconds: Double
    }

    /// The "steal" column of /proc/stat's first line, in seconds.
    static func stealSeconds() -> Double {
        guard let stat = readProcStat(), let line = stat.split(separator: "\n").first else { return 0 }
        let fields = line.split(separator: " ")
        return fields.count > 8 ? (Double(fields[8]) ?? 0) / Double(sysconf(Int32(_SC_CLK_TCK))) : 0
    }

    static func readProcStat() -> String? {
        try? String(contentsOfFile: "/proc/stat", encoding: .utf8)
    }

    /// Single-resolve latencies in nanoseconds: 1 ns buckets below 1 ms, exact values above.
    struct Distribution {
        var counts = [UInt32](repeating: 0, count: 1_000_000)
        var over: [UInt64] = []
        var total = 0
        var maximum: UInt64 = 0

        mutating func add(_ nanos: UInt64) {
            if nanos < UInt64(counts.count) { counts[Int(nanos)] += 1 } else { over.append(nanos) }
            total += 1
            maximum = max(maximum, nanos)
        }

        mutating func merge(_ other: Distribution) {
            for index in counts.indices where other.counts[index] != 0 { counts[index] += other.counts[index] }
            over += other.over
            total += other.total
            maximum = max(maximum, other.maximum)
        }

        /// The smallest latency at or above which a fraction `1 - q` of the samples lie.
        func quantile(_ q: Double) -> UInt64 {
            let rank = Int((q * Double(total)).rounded(.up))
            var seen = 0
            for (nanos, count) in counts.enumerated() {
                seen += Int(count)
                if seen >= rank { return UInt64(nanos) }
            }
            let sorted = over.sorted()
            return sorted[min(sorted.count - 1, max(0, rank - seen - 1))]
        }
    }

    static func involuntarySwitches() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage) // RUSAGE_THREAD, which Glibc's module map leaves out
        return usage.ru_nivcsw
    }

    /// `control`: the same loop and windows with no container at all, each operation a load, retain
    /// and release of a shared object (the floor row), and no registrations: what the VM alone does
    /// to single operations.
    static func run(threads: Int = 3, duration: Duration = .seconds(10), control: Bool = false) -> Result {
        let container = WeaveDI.Container(settings: InstrumentationSettings(slowResolutionThreshold: .milliseconds(10)))
        container.register(Service.self, scope: .singleton) { Service() }
        container.register(orderServiceName, Service.self, scope: .singleton) { Service(value: 1) }
        container.register(Widget.self) { Widget() }
        container.register(orderServiceName, Widget.self) { Widget(value: 2) }

        let results = Mutex<[(clean: Distribution, all: Distribution, preempted: Int, windows: Int, registrations: Int)]>([])
        let nanos = UInt64(Harness.nanos(duration))
        let stealBefore = stealSeconds()
        let took = Harness.runConcurrently(threads: threads) { index in
            let registers = index == 0
            var clean = Distribution()
            var all = Distribution()
            var window = [UInt64](repeating: 0, count: 64)
            var preempted = 0
            var windows = 0
            var registrations = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var nextRegistration = start + 1_000_000
            var operation = 0
            while true {
                let switches = involuntarySwitches()
                for slot in 0..<64 {
                    let before = DispatchTime.now().uptimeNanoseconds
                    switch control ? 4 : operation & 3 {
                    case 4: blackHole(load(holder))
                    case 0: blackHole(container.resolve(Service.self))
                    case 1: blackHole(container.resolve(Widget.self))
                    case 2: blackHole(container.resolve(orderServiceName, Service.self))
                    default: blackHole(container.resolve(orderServiceName, Widget.self))
                    }
                    window[slot] = DispatchTime.now().uptimeNanoseconds - before
                    operation &+= 1
                }
                let wasPreempted = involuntarySwitches() != switches
                for sample in window {
                    all.add(sample)
                    if !wasPreempted { clean.add(sample) }
                }
                windows += 1
                if wasPreempted { preempted += 1 }
                let now = DispatchTime.now().uptimeNanoseconds
                if registers && !control && now >= nextRegistration {
                    container.register("extra-\(registrations)", Widget.self) { Widget() }
                    registrations += 1
                    nextRegistration += 1_000_000
                }
                if now - start >= nanos { break }
            }
            results.withLock { $0.append((clean, all, preempted, windows, registrations)) }
        }
        var clean = Distribution()
        var all = Distribution()
        var preempted = 0
        var windows = 0
        var registrations = 0
        for result in results.withLock({ $0 }) {
            clean.merge(result.clean)
            all.merge(result.all)
            preempted += result.preempted
            windows += result.windows
            registrations += result.registrations
        }
        let slow = container.statistics().services.reduce(0) { $0 + $1.slowResolutions }
        return Result(threads: threads, seconds: Harness.nanos(took) / 1e9, clean: clean, all: all,
                      preemptedWindows: preempted, windows: windows, registrations: registrations, slowResolutions: slow,
                      stealSeconds: stealSeconds() - stealBefore)
    }
}
