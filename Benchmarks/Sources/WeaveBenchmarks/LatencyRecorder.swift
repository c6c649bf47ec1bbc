import Foundation
import WeaveDI

/// Quantiles of single resolves, in nanoseconds.
struct LatencySummary {
    let resolves: Int
    let p50: Double
    let p999: Double
    let max: Double
}

/// Times single singleton resolves, each between two clock reads, into a histogram of 1 ns buckets.
enum LatencyRecorder {
    /// Resolves of a `Service` singleton in `container` on this thread, one after another, for `duration`.
    static func resolves(of container: WeaveDI.Container, for duration: Duration) -> LatencySummary {
        container.register(Service.self, scope: .singleton) { Service() }
        let limit = 100_000
        var counts = [UInt32](repeating: 0, count: limit + 1)
        var maximum: UInt64 = 0
        var total = 0
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(Harness.nanos(duration))
        counts.withUnsafeMutableBufferPointer { buckets in
            while DispatchTime.now().uptimeNanoseconds < end {
                for _ in 0..<1_000 {
                    let start = DispatchTime.now().uptimeNanoseconds
                    blackHole(container.resolve(Service.self))
                    let took = DispatchTime.now().uptimeNanoseconds - start
                    buckets[Int(min(took, UInt64(limit)))] += 1
                    maximum = max(maximum, took)
                }
                total += 1_000
            }
        }
        func quantile(_ q: Double) -> Double {
            let rank = UInt64((q * Double(total)).rounded(.up))
            var seen: UInt64 = 0
            for (nanos, count) in counts.enumerated() {
                seen += UInt64(count)
                if seen >= rank { return Double(nanos) }
            }
            return Double(maximum)
        }
        return LatencySummary(resolves: total, p50: quantile(0.5), p999: quantile(0.999), max: Double(maximum))
    }
}
