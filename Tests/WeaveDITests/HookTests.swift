#if canImport(Glibc)
import Glibc
#endif
import Testing
import WeaveSupport
@testable import WeaveDI

private struct SlowService: Sendable {}
private struct SettingsProbe: Sendable {}
private struct MissingForHook: Sendable {}
private struct ThrowingForHook: Sendable {}
private struct CycleHookA: Sendable {}
private struct CycleHookB: Sendable {}
private struct ArgumentForHook: Sendable {}

/// Collects what hook handlers receive.
private final class Received: Sendable {
    let events = Locked<[(String, String)]>([])
    func add(_ service: String, _ detail: String) { events.withLock { $0.append((service, detail)) } }
    func matching(_ service: String) -> [String] { events.withLock { $0.filter { $0.0 == service }.map(\.1) } }
}

@Suite struct HookTests {
    @Test func slowResolutionHookReceivesNameAndSecondsUntilCancelled() async throws {
        let container = Container()
        container.register(SlowService.self) {
            usleep(25_000)
            return SlowService()
        }
        let received = Received()
        let token = container.instrumentation.onSlowResolution { service, seconds in received.add(service, "\(seconds)") }
        _ = container.resolve(SlowService.self)
        await container.instrumentation.flush()
        let seen = received.matching("SlowService")
        #expect(seen.count == 1)
        let seconds = try #require(seen.first.flatMap(Double.init))
        // The container's own measurement of the run, as its statistics keep it.
        let recorded = try #require(container.statistics()["SlowService"]).factoryLatency.sumSeconds
        #expect(abs(seconds - recorded) < 1e-9, "\(seconds) s given to the hook, \(recorded) s recorded")

        token.cancel()
        _ = container.resolve(SlowService.self)
        await container.instrumentation.flush()
        #expect(received.matching("SlowService").count == 1)
        #expect(container.statistics()["SlowService"]?.slowResolutions == 2)
    }

    @Test func thresholdIsADuration() {
        UnifiedDI.slowResolutionThreshold = .milliseconds(10)
        #expect(UnifiedDI.slowResolutionThreshold == .milliseconds(10))
        #expect(Container.live.instrumentationSettings.slowResolutionThreshold == .milliseconds(10))
    }

    /// Each container has its own threshold and log rate limit: setting one changes no other.
    @Test func instrumentationSettingsArePerContainer() {
        let everything = Container(settings: InstrumentationSettings(slowResolutionThreshold: .zero))
        let nothing = Container(settings: InstrumentationSettings(slowResolutionThreshold: .seconds(3_600),
                                                                  logRateLimit: LogRateLimit(burst: 1, window: .seconds(1))))
        for container in [everything, nothing] { container.register(SettingsProbe.self) { SettingsProbe() } }
        _ = everything.resolve(SettingsProbe.self)
        _ = nothing.resolve(SettingsProbe.self)
        #expect(everything.statistics()["SettingsProbe"]?.slowResolutions == 1)
        #expect(nothing.statistics()["SettingsProbe"]?.slowResolutions == 0)
        #expect(nothing.instrumentationSettings.logRateLimit == LogRateLimit(burst: 1, window: .seconds(1)))
        #expect(everything.instrumentationSettings.logRateLimit == .default)
        #expect(Container().instrumentationSettings == .default)
    }

    @Test func errorHookFiresForEachKindWithTheService() async {
        let container = Container()
        let received = Received()
        let token = container.instrumentation.onResolutionError { service, error in
            received.add(service, (error as? ResolutionError)?.kind.rawValue ?? "other")
        }
        defer { token.cancel() }

        _ = container.resolve(MissingForHook.self)                       // miss through the optional API
        _ = try? container.resolveThrows(MissingForHook.self)            // a miss the caller sees: no hook
        container.register(ThrowingForHook.self, throwingFactory: { throw Failure(code: 3) })
        _ = container.resolve(ThrowingForHook.self)
        container.register(CycleHookA.self, throwingFactory: { _ = try container.resolveThrows(CycleHookB.self); return CycleHookA() })
        container.register(CycleHookB.self, throwingFactory: { _ = try container.resolveThrows(CycleHookA.self); return CycleHookB() })
        _ = container.resolve(CycleHookA.self)
        container.register(ArgumentForHook.self) { (value: Int) in _ = value; return ArgumentForHook() }
        _ = container.resolve(ArgumentForHook.self, argument: "text")
        await container.instrumentation.flush()

        #expect(received.matching("MissingForHook") == ["not_registered"])
        #expect(received.matching("ThrowingForHook") == ["factory_failed"])
        #expect(received.matching("CycleHookA") == ["cycle"])
        #expect(received.matching("ArgumentForHook") == ["argument_mismatch"])

        let statistics = container.statistics()
        #expect(statistics["MissingForHook"]?.errors[.notRegistered] == 2)
        #expect(statistics["MissingForHook"]?.scope == nil)
        #expect(statistics["ThrowingForHook"]?.errors[.factoryFailed] == 1)
        #expect(statistics["CycleHookA"]?.errors[.cycle] == 1)
        #expect(statistics["ArgumentForHook"]?.errors[.argumentMismatch] == 1)

        token.cancel()
        _ = container.resolve(MissingForHook.self)
        await container.instrumentation.flush()
        #expect(received.matching("MissingForHook").count == 1)
    }

    /// Hooks and the log level belong to a container's instrumentation: one container's handlers
    /// never hear another's events, a child shares its parent's, and `UnifiedDI`'s are `Container.live`'s.
    @Test func hooksAndLogLevelArePerInstrumentation() async {
        let first = Container(), second = Container()
        let child = first.createChild()
        let shared = Instrumentation(logLevel: .errors)
        let third = Container(instrumentation: shared)
        let received = Received()
        first.instrumentation.onResolutionError { service, _ in received.add(service, "first") }
        second.instrumentation.onResolutionError { service, _ in received.add(service, "second") }
        shared.onResolutionError { service, _ in received.add(service, "shared") }
        _ = first.resolve(MissingForHook.self)
        _ = child.resolve(CycleHookB.self)
        _ = third.resolve(SlowService.self)
        for container in [first, second, third] { await container.instrumentation.flush() }
        #expect(received.matching("MissingForHook") == ["first"])
        #expect(received.matching("CycleHookB") == ["first"])
        #expect(received.matching("SlowService") == ["shared"])
        #expect(child.instrumentation === first.instrumentation)
        #expect(third.instrumentation.logLevel == .errors)
        #expect(first.instrumentation.logLevel == .warnings)

        let saved = UnifiedDI.logLevel
        defer { UnifiedDI.setLogLevel(saved) }
        UnifiedDI.setLogLevel(.all)
        #expect(Container.live.instrumentation.logLevel == .all)
        #expect(first.instrumentation.logLevel == .warnings)
    }
}
