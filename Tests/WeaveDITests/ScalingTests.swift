#if canImport(Glibc)
import Glibc
#endif
import Testing
import WeaveSupport
@testable import WeaveDI

/// The resolve paths that write nothing another thread uses (docs/architecture.md, "What a resolve
/// writes"): counts that stay exact on many threads, snapshots that stay consistent while they
/// resolve, shards of their own, and registrations that a transient's factory keeps using while they
/// are replaced. Scripts/test runs them under ThreadSanitizer too.
@Suite struct ScalingTests {
    private final class Shared: Sendable {}
    private struct Value: Sendable { let number: Int }
    private final class Made: Sendable {}
    private final class Cached: Sendable {}
    private struct Wired: Sendable { let number: Int }
    private struct ThroughUnifiedDI: Sendable {}
    private final class Injected: Sendable {}
    private final class Holder: @unchecked Sendable { // the wrapper's storage is a `var` never reassigned
        @Inject var service: Injected?
    }

    /// Starts a thread running `body`; join it with `pthread_join`.
    private static func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
        final class Body: Sendable {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, Unmanaged.passRetained(Body(body)).toOpaque())
        precondition(status == 0, "pthread_create: \(status)")
        return thread
    }

    /// Runs `body(index)` on `count` new threads released together; returns when all have finished.
    private static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let barrier = Barrier(count)
        let threads = (0..<count).map { index in
            startThread {
                barrier.wait()
                body(index)
            }
        }
        for thread in threads { pthread_join(thread, nil) }
    }

    @Test func everyResolvePathCountsEachResolveOnceOnManyThreads() async throws {
        let container = Container()
        container.register(Shared.self, scope: .singleton) { Shared() }
        container.register(Value.self, scope: .singleton) { Value(number: 7) }
        container.register("primary", Shared.self, scope: .singleton) { Shared() }
        container.register(Cached.self, scope: .cached) { Cached() }
        container.register(Made.self) { Made() }
        container.register(Wired.self) { Wired(number: container.resolve(Value.self)!.number) }
        container.register(ThroughUnifiedDI.self, scope: .singleton) { ThroughUnifiedDI() }
        container.register(Injected.self, scope: .singleton) { Injected() }
        let threads = 4
        let each = 20_000
        let failures = Locked(0)
        Self.onThreads(threads) { _ in
            withContainer(container) {
                for _ in 0..<each {
                    var ok = container.resolve(Shared.self) != nil
                    ok = ok && container.resolve(Value.self)?.number == 7
                    ok = ok && container.resolve("primary", Shared.self) != nil
                    ok = ok && container.resolve(Cached.self) != nil
                    ok = ok && container.resolve(Made.self) != nil
                    ok = ok && container.resolve(Wired.self)?.number == 7
                    ok = ok && UnifiedDI.resolve(ThroughUnifiedDI.self) != nil
                    ok = ok && Holder().service != nil
                    if !ok { failures.withLock { $0 += 1 } }
                }
            }
        }
        // The async path, from tasks of the cooperative pool.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<threads {
                group.addTask {
                    for _ in 0..<each where (try? await container.resolveAsync(Shared.self)) == nil {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let total = UInt64(threads * each)
        let statistics = container.statistics()
        #expect(statistics["Shared"]?.resolutions == 2 * total) // sync and async
        #expect(statistics["Value"]?.resolutions == 2 * total) // directly and inside Wired's factory
        #expect(statistics["primary (Shared)"]?.resolutions == total)
        #expect(statistics["Cached"]?.resolutions == total)
        #expect(statistics["ThroughUnifiedDI"]?.resolutions == total)
        #expect(statistics["Injected"]?.resolutions == total)
        for transient in ["Made", "Wired"] {
            let entry = try #require(statistics[transient])
            #expect(entry.resolutions == total)
            #expect(entry.instancesCreated == total)
            // Every factory run is timed: the histogram holds each one, and its buckets add up to its count.
            #expect(entry.factoryLatency.count == total)
            #expect(entry.factoryLatency.bucketCounts.reduce(0, +) == total)
        }
        for shared in ["Shared", "Value", "primary (Shared)", "Cached", "ThroughUnifiedDI", "Injected"] {
            #expect(statistics[shared]?.instancesCreated == 1)
        }
        // The edge from Wired to Value is recorded once, however many threads recorded it.
        #expect(container.dependencyGraph().edges.map { "\($0.from) → \($0.to)" } == ["Wired → Value"])
    }

    @Test func snapshotsTakenWhileTwoThreadsResolveAreConsistent() {
        let container = Container()
        container.register(Made.self) { Made() }
        container.register(Value.self, scope: .singleton) { Value(number: 1) }
        let stop = Locked(false)
        let problems = Locked<[String]>([])
        Self.onThreads(3) { index in
            if index < 2 {
                while !stop.withLock({ $0 }) {
                    _ = container.resolve(Made.self)
                    _ = container.resolve(Value.self)
                }
                return
            }
            var last: (made: UInt64, value: UInt64) = (0, 0)
            for round in 0..<2_000 {
                let statistics = container.statistics()
                let made = statistics["Made"]?.resolutions ?? 0
                let value = statistics["Value"]?.resolutions ?? 0
                let histogram = statistics["Made"]?.factoryLatency
                // Counted and timed under one hold of the shard's lock, copied under one too.
                if let histogram, histogram.count != made || histogram.bucketCounts.reduce(0, +) != made {
                    problems.withLock { $0.append("round \(round): \(made) resolves, histogram count \(histogram.count)") }
                }
                if made < last.made || value < last.value {
                    problems.withLock { $0.append("round \(round): counts went down from \(last) to \((made, value))") }
                }
                last = (made, value)
            }
            stop.withLock { $0 = true }
        }
        #expect(problems.withLock { $0 } == [])
        #expect((container.statistics()["Made"]?.resolutions ?? 0) > 0)
    }

    @Test func liveThreadsHaveShardsOfTheirOwnUntilThereAreMoreThreadsThanShards() {
        var slots = ShardSlots(shards: 16)
        let first = (0..<16).map { _ in slots.acquire() }
        #expect(Set(first).count == 16)
        // Threads come and go while the others live on: the next one gets the shard given back,
        // never one a live thread has (round-robin assignment would hand out shard 0 again here).
        for _ in 0..<20 {
            slots.release(first[5])
            #expect(slots.acquire() == first[5])
        }
        slots.release(first[9])
        slots.release(first[5])
        #expect([slots.acquire(), slots.acquire()] == [first[5], first[9]].sorted())
        // A 17th live thread shares the least used shard; one more spreads to the next.
        #expect(slots.acquire() == 0)
        #expect(slots.acquire() == 1)
        #expect(slots.users.reduce(0, +) == 18)
        // A thread's frame takes its shard from the process's assignment.
        #expect((0..<ShardedLock.shardCount).contains(ThreadFrame.current.pointee.shard))
    }

    /// Sets its flag when it is released.
    private final class Witness: Sendable {
        let flag: Locked<Bool>
        init(_ flag: Locked<Bool>) { self.flag = flag }
        deinit { flag.withLock { $0 = true } }
    }

    /// A factory that says it runs, then waits for `proceed`: a run held open on another thread.
    /// Its context holds `witness`.
    private static func heldFactory(entered: Locked<Bool>, proceed: Locked<Bool>, holding witness: Witness? = nil) -> @Sendable () -> Made {
        {
            _ = witness
            entered.withLock { $0 = true }
            while !proceed.withLock({ $0 }) { usleep(100) }
            return Made()
        }
    }

    @Test func aReplacedTransientStaysWhileItsFactoryRunsAndGoesAtTheNextChange() {
        let released = Locked(false)
        let entered = Locked(false)
        let proceed = Locked(false)
        let resolved = Locked(false)
        let container = Container()
        container.register(Made.self, factory: Self.heldFactory(entered: entered, proceed: proceed, holding: Witness(released)))
        let thread = Self.startThread { let made = container.resolve(Made.self) != nil; resolved.withLock { $0 = made } }
        while !entered.withLock({ $0 }) { usleep(100) }
        // Replaced while its factory runs on another thread, pinned there: kept, not released.
        container.register(Made.self) { Made() }
        #expect(container.lock.withWriteLock { container.retired.count } == 1)
        #expect(!released.withLock { $0 })
        proceed.withLock { $0 = true }
        pthread_join(thread, nil)
        #expect(resolved.withLock { $0 })
        #expect(!released.withLock { $0 })
        // The next change of the table finds no pin left and releases it.
        container.register(Value.self) { Value(number: 2) }
        #expect(container.lock.withWriteLock { container.retired.count } == 0)
        #expect(released.withLock { $0 })
        #expect(container.statistics()["Made"]?.resolutions == 1)
    }

    /// A factory that never returns (a hung upstream) holds its own registration and nothing else:
    /// 40,000 replacements of another key while two threads resolve it keep at most what those two
    /// hold pinned at each change, and nothing once they stop (#68).
    @Test func aFactoryThatNeverReturnsHoldsNothingReplacedLater() {
        let entered = Locked(false)
        let proceed = Locked(false)
        let stop = Locked(false)
        let container = Container()
        container.register(Made.self, factory: Self.heldFactory(entered: entered, proceed: proceed))
        container.register(Value.self) { Value(number: 0) }
        let held = Self.startThread { _ = container.resolve(Made.self) }
        while !entered.withLock({ $0 }) { usleep(100) }
        let resolvers = (0..<2).map { _ in
            Self.startThread { while !stop.withLock({ $0 }) { precondition(container.resolve(Value.self) != nil) } }
        }
        var most = 0
        for number in 1...40_000 {
            container.register(Value.self) { Value(number: number) }
            most = max(most, container.lock.withWriteLock { container.retired.count })
        }
        stop.withLock { $0 = true }
        for thread in resolvers { pthread_join(thread, nil) }
        container.register(Value.self) { Value(number: -1) }
        #expect(most <= 2, "at most one per resolving thread")
        #expect(container.lock.withWriteLock { container.retired.count } == 0)
        #expect(container.resolve(Value.self)?.number == -1)
        // Replaced while it runs, the held factory's own registration waits for it, and only it.
        container.register(Made.self) { Made() }
        #expect(container.lock.withWriteLock { container.retired.count } == 1)
        proceed.withLock { $0 = true }
        pthread_join(held, nil)
        container.register(Value.self) { Value(number: -2) }
        #expect(container.lock.withWriteLock { container.retired.count } == 0)
    }

    /// More threads than shards (two on one shard) resolving transients while their registrations
    /// are replaced: every resolve gets an instance, and once they stop nothing stays retired.
    @Test func moreThreadsThanShardsChurnAndNothingStaysRetired() {
        let container = Container()
        container.register(Made.self) { Made() }
        container.register(Value.self) { Value(number: 0) }
        let stop = Locked(false)
        let failures = Locked(0)
        let threads = (0...ShardedLock.shardCount).map { index in
            Self.startThread {
                while !stop.withLock({ $0 }) {
                    let made = index % 2 == 0 ? container.resolve(Made.self) != nil : container.resolve(Value.self) != nil
                    if !made { failures.withLock { $0 += 1 } }
                }
            }
        }
        for number in 1...5_000 {
            if number % 2 == 0 { container.register(Made.self) { Made() } } else { container.register(Value.self) { Value(number: number) } }
        }
        stop.withLock { $0 = true }
        for thread in threads { pthread_join(thread, nil) }
        container.register(Value.self) { Value(number: -1) }
        #expect(failures.withLock { $0 } == 0)
        #expect(container.lock.withWriteLock { container.retired.count } == 0)
    }

    @Test func releaseAllDropsInstancesAtOnceWhileAFactoryRunsOnAnotherThread() {
        let released = Locked(false)
        let entered = Locked(false)
        let proceed = Locked(false)
        let container = Container()
        container.register(Witness.self, scope: .singleton) { Witness(released) }
        container.register(Made.self, factory: Self.heldFactory(entered: entered, proceed: proceed))
        #expect(container.resolve(Witness.self) != nil)
        let thread = Self.startThread { _ = container.resolve(Made.self) }
        while !entered.withLock({ $0 }) { usleep(100) }
        // The pinned factory's registration waits for it to return; the singleton's registration
        // and instance go at once.
        container.releaseAll()
        #expect(container.lock.withWriteLock { container.retired.count } == 1)
        #expect(released.withLock { $0 })
        proceed.withLock { $0 = true }
        pthread_join(thread, nil)
        container.register(Value.self) { Value(number: 1) }
        #expect(container.lock.withWriteLock { container.retired.count } == 0)
    }

    @Test func edgesAreRecordedAgainAfterReleaseAll() {
        let container = Container()
        for _ in 0..<2 {
            container.register(Value.self, scope: .singleton) { Value(number: 3) }
            container.register(Wired.self) { Wired(number: container.resolve(Value.self)!.number) }
            for _ in 0..<3 { _ = container.resolve(Wired.self) }
            #expect(container.dependencyGraph().edges.map { "\($0.from) → \($0.to)" } == ["Wired → Value"])
            container.releaseAll()
            #expect(container.dependencyGraph().edges.isEmpty)
        }
        // A child's edge set holds edges between its parent's registrations, which its releaseAll
        // leaves: the thread's memo of recorded edges must not hide them from the emptied set.
        let parent = Container()
        let child = Container(parent: parent)
        parent.register(Value.self, scope: .singleton) { Value(number: 4) }
        parent.register(Wired.self) { Wired(number: child.resolve(Value.self)!.number) }
        for _ in 0..<2 {
            for _ in 0..<3 { _ = child.resolve(Wired.self) }
            #expect(child.dependencyGraph().edges.map { "\($0.from) → \($0.to)" } == ["Wired → Value"])
            child.releaseAll()
        }
    }
}

/// A pthread barrier for `count` threads.
private final class Barrier: @unchecked Sendable {
    // @unchecked: the barrier is only touched through pthread_barrier_wait, which is thread-safe.
    private let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)

    init(_ count: Int) {
        pthread_barrier_init(barrier, nil, UInt32(count))
    }

    deinit {
        pthread_barrier_destroy(barrier)
        barrier.deallocate()
    }

    func wait() {
        pthread_barrier_wait(barrier)
    }
}
