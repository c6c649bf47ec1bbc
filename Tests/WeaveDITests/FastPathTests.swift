#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Testing
@testable import WeaveDI
import WeaveSupport

/// A service that says which registration made it.
private final class Named: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// The resolve paths made fast for the performance issue keep their guarantees: exact counts, the
/// right instance under every name, the live container and overrides seen at once, one kept value
/// per wrapper, and a lock that hands over correctly when its waiters park.
@Suite struct FastPathTests {
    @Test func thousandsOfNamesEachResolveTheirOwnInstance() {
        let container = Container()
        let names = (0..<5_000).map { "service-\($0)-\(String(repeating: "x", count: $0 % 40))" }
        for name in names { container.register(name, Named.self, scope: .singleton) { Named(name) } }
        container.register(Named.self, scope: .singleton) { Named("unnamed") }
        for name in names { #expect(container.resolve(name, Named.self)?.name == name) }
        #expect(container.resolve(Named.self)?.name == "unnamed")
        #expect(container.resolve("service-5000", Named.self) == nil)
        // A name is a key of its own per type.
        #expect(container.resolve(names[0], String.self) == nil)
        let statistics = container.statistics()
        #expect(statistics["\(names[7]) (Named)"]?.resolutions == 1)
    }

    @Test func namesThatDifferOnlyInTheirTailOrLengthAreDistinct() {
        let container = Container()
        let names = ["", "a", "a\0", "abcdefgh", "abcdefghi", "abcdefgh\0", "ABCDEFGH", "é", "e\u{301}"]
        for name in names { container.register(name, Named.self) { Named(name) } }
        for name in names { #expect(container.resolve(name, Named.self)?.name == name) }
    }

    @Test func transientAndArgumentResolvesAreCountedOnceEach() {
        for instrumented in [true, false] {
            let container = Container(instrumented: instrumented)
            container.register(Named.self) { Named("t") }
            container.register("n", Named.self) { Named("n") }
            container.register(Int.self) { (value: String) in value.count }
            for _ in 0..<100 {
                _ = container.resolve(Named.self)
                _ = container.resolve("n", Named.self)
                #expect(container.resolve(Int.self, argument: "four") == 4)
            }
            #expect(container.resolve(Int.self, argument: 4) == nil) // the wrong argument type
            let statistics = container.statistics()
            #expect(statistics["Named"]?.resolutions == 100)
            #expect(statistics["n (Named)"]?.resolutions == 100)
            #expect(statistics["Int"]?.resolutions == 100) // the mismatch is an error, not a resolve
            #expect(statistics["Int"]?.errors[.argumentMismatch] == 1)
            if instrumented {
                #expect(statistics["Named"]?.instancesCreated == 100)
                #expect(statistics["Named"]?.factoryLatency.count == 100)
                #expect(statistics["Int"]?.instancesCreated == 100)
            }
        }
    }

    @Test func overridesReachTasksCreatedInsideTheScope() async {
        let override = Container()
        override.register(Named.self, instance: Named("override"))
        let name = await withContainer(override) {
            await Task { UnifiedDI.resolve(Named.self)?.name }.value
        }
        #expect(name == "override")
        #expect(UnifiedDI.resolve(Named.self)?.name != "override")
    }

    @Test func nestedSynchronousScopesRestoreTheOuterOneEvenWhenTheyThrow() async {
        let outer = Container()
        outer.register(Named.self, instance: Named("outer"))
        let inner = Container()
        inner.register(Named.self, instance: Named("inner"))
        struct Thrown: Error {}
        await withContainer(outer) {
            withContainer(outer) {
                #expect(UnifiedDI.resolve(Named.self)?.name == "outer")
                withContainer(inner) { #expect(UnifiedDI.resolve(Named.self)?.name == "inner") }
                #expect(UnifiedDI.resolve(Named.self)?.name == "outer")
                #expect(throws: Thrown.self) { try withContainer(inner) { throw Thrown() } }
                #expect(Container.current === outer)
            }
            // Back in the asynchronous scope: the task local.
            #expect(Container.current === outer)
        }
        #expect(Container.current !== outer)
    }

    @Test func injectKeepsOneValueWhenThreadsRaceOnTheFirstAccess() {
        final class Holder: @unchecked Sendable {
            @Inject var value: Named?
        }
        let container = Container()
        let made = Atomic<Int>(0)
        container.register(Named.self) { Named("made \(made.add(1, ordering: .relaxed).newValue)") }
        withContainer(container) {
            for _ in 0..<100 {
                let holder = Holder()
                // Locked, not Mutex: ThreadSanitizer does not see Mutex's contended hand-over on Linux.
                let seen = Locked<Set<ObjectIdentifier>>([])
                DispatchQueue.concurrentPerform(iterations: 8) { _ in
                    // The override is task-local; these threads read the live container, so resolve here.
                    withContainer(container) {
                        let value = holder.value!
                        seen.withLock { _ = $0.insert(ObjectIdentifier(value)) }
                    }
                }
                #expect(seen.withLock { $0.count } == 1)
            }
        }
    }

    private struct Depth<T>: Sendable {}
    private enum GeneratedKey<T>: InjectedKey {
        static var liveValue: String { String(describing: T.self) }
    }

    /// Visits `count` distinct key types, `GeneratedKey<Depth<…<Int>>>`, and checks each reads its own default.
    private static func readDefaults<T>(_: T.Type, remaining: Int) -> Int {
        guard remaining > 0 else { return 0 }
        let ok = InjectedValues.current[GeneratedKey<T>.self] == String(describing: T.self) ? 1 : 0
        return ok + readDefaults(Depth<T>.self, remaining: remaining - 1)
    }

    @Test func injectedDefaultsOfHundredsOfKeysAreEachTheirOwn() {
        #expect(Self.readDefaults(Int.self, remaining: 300) == 300)
        // Read again, from the table (grown several times since the first ones went in).
        #expect(Self.readDefaults(Int.self, remaining: 300) == 300)
    }

    @Test func injectedDefaultsAreReadConsistentlyFromManyThreads() {
        let wrong = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            if Self.readDefaults(Int8.self, remaining: 150) != 150 { wrong.add(1, ordering: .relaxed) }
        }
        let wrongReads = wrong.load(ordering: .relaxed)
        #expect(wrongReads == 0)
    }

    @Test func theParkingLockExcludesAndHandsOverToParkedWaiters() {
        let word = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: ParkingLock.wordCount)
        ParkingLock.initializeWords(at: word)
        let lock = ParkingLock(word: word)
        defer { lock.deinitializeWords(); word.deallocate() }
        nonisolated(unsafe) var counter = 0
        let inside = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        DispatchQueue.concurrentPerform(iterations: 6) { thread in
            for step in 0..<2_000 {
                lock.withLock {
                    if inside.add(1, ordering: .relaxed).newValue != 1 { overlapped.store(true, ordering: .relaxed) }
                    counter += 1
                    // Now and then hold the lock long enough for the others to stop spinning and park.
                    if step % 500 == thread { usleep(2_000) }
                    inside.subtract(1, ordering: .relaxed)
                }
            }
        }
        #expect(counter == 12_000)
        let everOverlapped = overlapped.load(ordering: .relaxed)
        #expect(!everOverlapped)
        let state = word.pointee.load(ordering: .relaxed)
        #expect(state == 0)
        let waiting = lock.waiters.pointee.load(ordering: .relaxed)
        #expect(waiting == 0)
    }

    @Test func theIntervalClockAgreesWithTheMonotonicClock() {
        let clock = IntervalClock.calibration
        // Each end is a reading of the interval clock between two of CLOCK_MONOTONIC, read again
        // while the thread lost its core between them (the two clocks compared, not the machine).
        func reading() -> (ticks: UInt64, nanos: UInt64) {
            while true {
                let before = MonotonicClock.nanos(), ticks = clock.now(), after = MonotonicClock.nanos()
                if after &- before < 20_000 { return (ticks, before / 2 + after / 2) }
            }
        }
        let start = reading()
        usleep(30_000)
        let end = reading()
        let ticks = end.ticks &- start.ticks
        let nanos = end.nanos &- start.nanos
        let measured = Double(clock.nanoseconds(ticks))
        #expect(abs(measured - Double(nanos)) < Double(nanos) * 0.01, "\(measured) ns by the interval clock, \(nanos) ns by CLOCK_MONOTONIC")
        // The fixed-point conversion is the rate's, from one tick to days of them: it truncates (less
        // than a nanosecond), and the rate in 32.32 fixed point is off by at most 2^-33 ns per tick.
        for ticks: UInt64 in [0, 1, 999, 123_456_789, 1 << 40, 1 << 50] {
            let exact = clock.usesCycleCounter ? Double(ticks) * clock.nanosPerTick : Double(ticks)
            #expect(abs(Double(clock.nanoseconds(ticks)) - exact) <= 1 + Double(ticks) / 0x2_0000_0000, "\(ticks) ticks")
        }
    }
}

/// The tests that assign `Container.live`, one at a time (no other test assigns it).
@Suite(.serialized) struct LiveContainerTests {
    @Test func assigningLiveIsSeenAtOnceOnEveryThread() {
        let saved = Container.live
        defer { Container.live = saved }
        for round in 0..<50 {
            let container = Container()
            container.register(Named.self, instance: Named("round \(round)"))
            Container.live = container
            #expect(UnifiedDI.resolve(Named.self)?.name == "round \(round)")
            let seen = Locked<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                seen.withLock { $0 = UnifiedDI.resolve(Named.self)?.name }
                done.signal()
            }
            done.wait()
            #expect(seen.withLock { $0 } == "round \(round)")
        }
    }

    @Test func aLiveContainerReplacedDuringItsOwnResolveLivesUntilTheResolveReturns() {
        final class Outer: Sendable {}
        final class WeakContainer: @unchecked Sendable { // written once, before the resolve
            weak var value: Container?
        }
        let saved = Container.live
        defer { Container.live = saved }
        let replaced = WeakContainer()
        let aliveInItsFactory = Locked<Bool?>(nil)
        do {
            let container = Container()
            container.register(Outer.self) {
                // Another test or thread replaces `live` while this factory runs, and the factory
                // resolves through `UnifiedDI` again: this thread's frame drops its cached container.
                let next = Container()
                next.register(Named.self, instance: Named("next"))
                Container.live = next
                _ = UnifiedDI.resolve(Named.self)
                aliveInItsFactory.withLock { $0 = replaced.value != nil }
                return Outer()
            }
            replaced.value = container
            Container.live = container
        }
        #expect(UnifiedDI.resolve(Outer.self) != nil)
        #expect(aliveInItsFactory.withLock { $0 } == true, "the container was freed while it was resolving")
        // Released once the resolve returned, and whatever it handed off has run: under
        // ThreadSanitizer the resolve can pass the slow-resolution threshold, and the event's
        // delivery holds the container until it is delivered (a bound on waiting, not a timing).
        for _ in 0..<500 where replaced.value != nil { usleep(10_000) }
        #expect(replaced.value == nil, "released once the resolve returned")
    }

    @Test func aReplacedLiveContainerMayResolveFromItsInstancesDeinit() {
        final class ResolvesWhenReleased: Sendable {
            deinit { _ = UnifiedDI.resolve(Named.self) }
        }
        let saved = Container.live
        defer { Container.live = saved }
        do {
            let container = Container()
            container.register(ResolvesWhenReleased.self, instance: ResolvesWhenReleased())
            container.register(Named.self, instance: Named("replaced"))
            Container.live = container
            #expect(UnifiedDI.resolve(Named.self)?.name == "replaced") // this thread now caches it
        }
        let next = Container()
        next.register(Named.self, instance: Named("next"))
        Container.live = next // the setter drops its reference outside its mutex
        // This thread drops its cached one, and the instance's deinit resolves through the same frame.
        #expect(UnifiedDI.resolve(Named.self)?.name == "next")
    }
}
