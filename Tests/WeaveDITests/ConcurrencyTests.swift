#if canImport(Glibc)
import Glibc
#endif
import Testing
import WeaveSupport
@testable import WeaveDI

/// Scripts/test runs these (with the rest) a second time under ThreadSanitizer.
@Suite struct ConcurrencyTests {
    private struct Key0: Sendable {}
    private struct Key1: Sendable {}
    private struct Key2: Sendable {}
    private struct Key3: Sendable {}

    private static func register(_ container: Container, _ key: Int, generation: Int) {
        switch key {
        case 0: container.register(Key0.self, scope: .singleton) { Key0() }
        case 1: container.register(Key1.self) { Key1() }
        case 2: container.register(Key2.self, scope: .cached) { Key2() }
        default: container.register("named-\(generation % 3)", Key3.self) { Key3() }
        }
    }

    private static func resolve(_ container: Container, _ key: Int) -> Bool {
        switch key {
        case 0: return container.resolve(Key0.self) != nil
        case 1: return container.resolve(Key1.self) != nil
        case 2: return container.resolve(Key2.self) != nil
        default: return container.resolve("named-0", Key3.self) != nil
        }
    }

    @Test func stressEightTasksMixedOperationsKeepExactCounts() async {
        let container = Container()
        for key in 0..<4 { Self.register(container, key, generation: 0) }
        let operations = 100_000
        let resolved = await withTaskGroup(of: [Int].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var counts = [0, 0, 0, 0]
                    var state = UInt64(task + 1)
                    for step in 0..<operations {
                        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        let key = Int(state >> 60) & 3
                        if step % 50 == 0 {
                            Self.register(container, key, generation: step)
                        } else if step % 997 == 0 {
                            container.evictCached()
                        } else if Self.resolve(container, key) {
                            counts[key] += 1
                        }
                    }
                    return counts
                }
            }
            return await group.reduce(into: [0, 0, 0, 0]) { total, counts in
                for key in 0..<4 { total[key] += counts[key] }
            }
        }
        let hits = Dictionary(uniqueKeysWithValues: container.registrations.map { ($0.key.description, $0.hitCount) })
        #expect(hits["Key0"] == UInt64(resolved[0]))
        #expect(hits["Key1"] == UInt64(resolved[1]))
        #expect(hits["Key2"] == UInt64(resolved[2]))
        #expect(hits["named-0 (Key3)"] == UInt64(resolved[3]))
        #expect(resolved.reduce(0, +) > 7 * operations)
    }

    @Test func slowFactoryDoesNotBlockOtherKeys() async throws {
        let container = Container()
        let release = Locked(false)
        let entered = Locked(false)
        container.register(Repository.self, scope: .singleton) {
            entered.withLock { $0 = true }
            while !release.withLock({ $0 }) { usleep(1_000) }
            return Repository(settings: Settings(name: "slow"))
        }
        container.register(Settings.self) { Settings(name: "fast") }
        let slow = Task.detached { container.resolve(Repository.self) }
        while !entered.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        // The slow factory is running and holds no lock: other keys resolve and registration works.
        #expect(container.resolve(Settings.self)?.name == "fast")
        container.register("other", Settings.self) { Settings(name: "other") }
        #expect(container.resolve("other", Settings.self)?.name == "other")
        #expect(container.registrations.count == 3)
        release.withLock { $0 = true }
        #expect(await slow.value?.settings.name == "slow")
    }

    @Test func concurrentRegistrationOfManyKeysGrowsTheTableSafely() async {
        let container = Container()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        container.register("k\(task)-\(index)", Int.self) { index }
                        _ = container.resolve("k\(task)-\(index)", Int.self)
                    }
                }
            }
        }
        #expect(container.registrations.count == 1_600)
        #expect(container.registrations.allSatisfy { $0.hitCount == 1 })
        #expect(container.resolve("k7-199", Int.self) == 199)
    }
}
