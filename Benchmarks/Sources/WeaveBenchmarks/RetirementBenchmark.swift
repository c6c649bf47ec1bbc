import Foundation
import Synchronization
import WeaveDI

/// Replacing a registration in a loop while two threads resolve it, with and without a transient
/// factory that never returns on a third (a hung upstream), as #68 set: the time of the
/// replacements and the resident memory they leave. A replaced registration is kept only while a
/// pin may hold it, so a factory held forever must cost the later replacements nothing.
enum RetirementBenchmark {
    private final class Stuck: Sendable {}
    private struct Value: Sendable { let number: Int }

    struct Result {
        let replacements: Int
        let seconds: Double
        let residentGrowth: Int
    }

    /// The process's resident bytes (`/proc/self/statm`'s second field, in pages).
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    static func run(replacements: Int, factoryHeld: Bool) -> Result {
        let container = Container()
        let release = Atomic<Bool>(false)
        let entered = Atomic<Bool>(false)
        let stop = Atomic<Bool>(false)
        container.register(Stuck.self) {
            entered.store(true, ordering: .releasing)
            while !release.load(ordering: .acquiring) { usleep(1_000) }
            return Stuck()
        }
        container.register(Value.self) { Value(number: 0) }
        var threads: [Thread] = []
        if factoryHeld {
            threads.append(Thread { _ = container.resolve(Stuck.self) })
        }
        for _ in 0..<2 {
            threads.append(Thread { while !stop.load(ordering: .relaxed) { _ = container.resolve(Value.self) } })
        }
        threads.forEach { $0.start() }
        while factoryHeld && !entered.load(ordering: .acquiring) { usleep(100) }
        let before = residentBytes()
        let start = ContinuousClock.now
        for number in 1...replacements {
            container.register(Value.self) { Value(number: number) }
        }
        let elapsed = ContinuousClock.now - start
        let growth = residentBytes() - before
        // The threads end on their own: the resolvers at `stop`, the held factory at `release`.
        stop.store(true, ordering: .relaxed)
        release.store(true, ordering: .releasing)
        return Result(replacements: replacements,
                      seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, residentGrowth: growth)
    }

    static func report() {
        print("\n### Retirement: replacing a registration while two threads resolve it (#68)\n")
        print("| replacements | a factory held forever on a third thread | time | per replacement | resident memory after − before |")
        print("|---:|---|---:|---:|---:|")
        for (count, held) in [(40_000, false), (40_000, true), (1_000_000, true)] {
            let result = run(replacements: count, factoryHeld: held)
            print("| \(count) | \(held ? "yes" : "no") | \(String(format: "%.2f", result.seconds)) s | " +
                  "\(format(result.seconds * 1e9 / Double(count))) ns | \(String(format: "%+.1f", Double(result.residentGrowth) / 1_048_576)) MB |")
            fflush(nil)
        }
    }
}
