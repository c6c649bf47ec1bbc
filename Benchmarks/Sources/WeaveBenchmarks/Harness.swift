import Foundation

/// Keeps the optimizer from discarding a benchmark's result.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// One measured case: `run(n)` performs `n` operations.
struct BenchmarkCase {
    let name: String
    /// False for peers that trap when used from two threads (unsynchronized Swinject).
    var threadSafe = true
    /// The services of `scalingContainer` each operation resolves once, whose counts the scaling
    /// section checks.
    var counts: [String] = []
    let run: @Sendable (Int) -> Void
}

/// Median nanoseconds per operation over `repetitions` timed runs, each sized to about `target`.
struct Measurement {
    let name: String
    let threads: Int
    let nanosPerOp: Double
    let samples: [Double]
    /// Operations per second across all threads.
    var throughput: Double { Double(threads) * 1e9 / nanosPerOp }
}

enum Harness {
    static let repetitions = 5
    static let target: Duration = .milliseconds(200)

    static func elapsed(_ body: () -> Void) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        body()
        return clock.now - start
    }

    /// Iterations that take about `target` on one thread.
    static func calibrate(_ benchmark: BenchmarkCase) -> Int {
        var n = 1_000
        while true {
            let took = elapsed { benchmark.run(n) }
            if took >= .milliseconds(20) || n >= 1 << 30 {
                return max(1_000, Int(nanos(target) / (nanos(took) / Double(n))))
            }
            n *= 4
        }
    }

    /// Runs `benchmark` on `threads` threads at once, each doing the calibrated number of operations;
    /// per-op time is wall time divided by operations per thread (so it is per thread).
    static func measure(_ benchmark: BenchmarkCase, threads: Int) -> Measurement {
        let n = calibrate(benchmark)
        benchmark.run(n / 10) // warm-up
        var samples: [Double] = []
        for _ in 0..<repetitions {
            let took = threads == 1 ? elapsed { benchmark.run(n) } : runConcurrently(threads: threads) { _ in benchmark.run(n) }
            samples.append(nanos(took) / Double(n))
        }
        let median = samples.sorted()[samples.count / 2]
        return Measurement(name: benchmark.name, threads: threads, nanosPerOp: median, samples: samples)
    }

    /// `benchmark` and `base` measured in alternation, `rounds` times each, so that a noisy moment
    /// of the machine (a shared VM's) hits both: medians of each, and the median of the per-round ratios.
    static func paired(_ benchmark: BenchmarkCase, against base: BenchmarkCase, threads: Int, rounds: Int = 7)
        -> (nanosPerOp: Double, baseNanosPerOp: Double, ratio: Double) {
        let n = calibrate(benchmark)
        let baseN = calibrate(base)
        benchmark.run(n / 10)
        base.run(baseN / 10)
        func once(_ benchmark: BenchmarkCase, _ n: Int) -> Double {
            let took = threads == 1 ? elapsed { benchmark.run(n) } : runConcurrently(threads: threads) { _ in benchmark.run(n) }
            return nanos(took) / Double(n)
        }
        var samples: [Double] = []
        var baseSamples: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<rounds {
            let baseSample = once(base, baseN)
            let sample = once(benchmark, n)
            samples.append(sample)
            baseSamples.append(baseSample)
            ratios.append(sample / baseSample)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return (median(samples), median(baseSamples), median(ratios))
    }

    static func nanos(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
    }

    /// Starts `threads` threads that wait at a barrier, then times them all running `body` (given the
    /// thread's index, 0 to `threads - 1`); `whileRunning` runs on the calling thread once they are released.
    static func runConcurrently(threads: Int, _ body: @escaping @Sendable (Int) -> Void,
                                whileRunning: () -> Void = {}) -> Duration {
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        for index in 0..<threads {
            let thread = Thread {
                ready.signal()
                go.wait()
                body(index)
                done.signal()
            }
            thread.start()
        }
        for _ in 0..<threads { ready.wait() }
        return elapsed {
            for _ in 0..<threads { go.signal() }
            whileRunning()
            for _ in 0..<threads { done.wait() }
        }
    }
}
