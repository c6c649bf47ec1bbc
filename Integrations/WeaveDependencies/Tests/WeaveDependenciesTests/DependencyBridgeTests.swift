import Dependencies
import Testing
import WeaveDI
import WeaveDependencies

// Upstream WeaveDI's swift-dependencies pattern, written as its documentation writes it (Swift 5 mode).

protocol ExchangeUseCase: Sendable { var rate: Double { get } }
struct LiveExchange: ExchangeUseCase { let rate = 1.1 }
struct RegisteredExchange: ExchangeUseCase { let rate = 2.2 }
struct TestExchange: ExchangeUseCase { let rate = 0.5 }
struct MockExchange: ExchangeUseCase { let rate = 9.9 }
struct InjectedMockExchange: ExchangeUseCase { let rate = 7.7 }

struct ExchangeUseCaseKey: InjectedKey {
    static var liveValue: any ExchangeUseCase { LiveExchange() }
    static var testValue: any ExchangeUseCase { TestExchange() }
}

// The documented line.
extension ExchangeUseCaseKey: DependencyKey {}

extension DependencyValues {
    var exchangeUseCase: any ExchangeUseCase {
        get { self[ExchangeUseCaseKey.self] }
        set { self[ExchangeUseCaseKey.self] = newValue }
    }
}

extension InjectedValues {
    var exchangeUseCase: any ExchangeUseCase {
        get { self[ExchangeUseCaseKey.self] }
        set { self[ExchangeUseCaseKey.self] = newValue }
    }
}

/// A key with only a `liveValue`, as most keys are.
struct ClockKey: InjectedKey {
    static var liveValue: Int { 42 }
}
extension ClockKey: DependencyKey {}

final class Feature {
    @Dependency(\.exchangeUseCase) var byKeyPath
    @Dependency(ExchangeUseCaseKey.self) var byKey
    @Injected(\.exchangeUseCase) var injected
}

private let exchangeName = String(describing: (any ExchangeUseCase).self)

@Suite struct DependencyBridgeTests {
    @Test func dependencyReadsAreServedByTheContainerAndCounted() {
        let container = Container()
        container.register((any ExchangeUseCase).self) { RegisteredExchange() }
        withContainer(container) {
            let feature = Feature()
            for _ in 0..<5 {
                #expect(feature.byKeyPath.rate == 2.2)
                #expect(feature.byKey.rate == 2.2)
            }
        }
        // Every read resolved through the container, counted and timed like any other.
        let statistics = container.statistics()[exchangeName]
        #expect(statistics?.resolutions == 10)
        #expect(statistics?.errorCount == 0)
    }

    @Test func withoutARegistrationTheKeysDefaultAnswersAndNoErrorIsCounted() {
        let container = Container()
        withContainer(container) {
            // The key's testValue under `swift test`, for @Dependency as for @Injected.
            #expect(Feature().byKeyPath.rate == 0.5)
            #expect(Feature().byKey.rate == 0.5)
            #expect(Feature().injected.rate == 0.5)
            // A key without a testValue falls back to its liveValue, as InjectedKey does.
            @Dependency(ClockKey.self) var clock
            #expect(clock == 42)
            #expect(ClockKey.testValue == 42)
            #expect(ClockKey.previewValue == 42)
        }
        #expect(container.statistics().services.allSatisfy { $0.errorCount == 0 })
    }

    @Test func withDependenciesOverridesReachInjected() {
        let container = Container()
        container.register((any ExchangeUseCase).self) { RegisteredExchange() }
        withContainer(container) {
            withDependencies {
                $0.exchangeUseCase = MockExchange()
            } operation: {
                let feature = Feature()
                #expect(feature.byKeyPath.rate == 9.9)
                #expect(feature.byKey.rate == 9.9)
                #expect(feature.injected.rate == 9.9)
                #expect(InjectedValues.current.exchangeUseCase.rate == 9.9)
                #expect(DependencyValues._current.exchangeUseCase.rate == 9.9)
            }
            // Outside the scope: the container's again.
            #expect(Feature().injected.rate == 2.2)
            #expect(Feature().byKeyPath.rate == 2.2)
        }
        // The overridden reads never reached the container.
        #expect(container.statistics()[exchangeName]?.resolutions == 2)
    }

    @Test func anOverrideThroughTheKeyItselfReachesInjectedToo() {
        withDependencies {
            $0[ExchangeUseCaseKey.self] = MockExchange()
        } operation: {
            #expect(Feature().injected.rate == 9.9)
            #expect(Feature().byKey.rate == 9.9)
        }
    }

    @Test func aDependencyCreatedInAScopeKeepsItsOverride() {
        let feature = withDependencies {
            $0.exchangeUseCase = MockExchange()
        } operation: {
            Feature()
        }
        // swift-dependencies' rule: @Dependency keeps the values of the scope it was created in.
        #expect(feature.byKeyPath.rate == 9.9)
        #expect(feature.byKey.rate == 9.9)
        // @Injected reads the values where it is read.
        #expect(feature.injected.rate == 0.5)
    }

    @Test func aWithInjectedValuesOverrideWinsOverWithDependencies() {
        withDependencies {
            $0.exchangeUseCase = MockExchange()
        } operation: {
            withInjectedValues {
                $0.exchangeUseCase = InjectedMockExchange()
            } operation: {
                let feature = Feature()
                #expect(feature.injected.rate == 7.7)
                #expect(feature.byKeyPath.rate == 7.7)
            }
        }
    }

    @Test func overridesFollowTasksAcrossSuspensions() async {
        await withDependencies {
            $0.exchangeUseCase = MockExchange()
        } operation: {
            let rate = await Task { Feature().injected.rate }.value
            #expect(rate == 9.9)
            await Task.yield()
            #expect(InjectedValues.current.exchangeUseCase.rate == 9.9)
        }
    }
}
