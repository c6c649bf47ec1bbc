import Testing
@testable import WeaveDI
import WeaveSupport

// Upstream WeaveDI's documented patterns, in the Swift 6 language mode (WeaveDISwift5Tests has
// the Swift 5 ones). Each test runs in a container of its own (`withContainer`), as parallel tests must.

protocol ExchangeUseCase: Sendable { var rate: Double { get } }
struct LiveExchange: ExchangeUseCase { let rate = 1.1 }
struct RegisteredExchange: ExchangeUseCase { let rate = 2.2 }
struct TestExchange: ExchangeUseCase { let rate = 0.5 }

enum ExchangeUseCaseKey: InjectedKey {
    static var liveValue: any ExchangeUseCase { LiveExchange() }
    static var testValue: any ExchangeUseCase { TestExchange() }
}

extension InjectedValues {
    var exchange: any ExchangeUseCase {
        get { self[ExchangeUseCaseKey.self] }
        set { self[ExchangeUseCaseKey.self] = newValue }
    }
}

final class Mailer: Sendable {}

extension WeaveDI.Container {
    var mailer: Mailer? { resolve(Mailer.self) }
}

struct MailerHolder {
    @Factory(\.mailer) var mailer: Mailer
}

struct RequiredHolder {
    @Injected var greeter: EnglishGreeter
}

struct OptionalHolder {
    @Injected var greeter: EnglishGreeter?
}

struct KeyHolder {
    @Injected(ExchangeUseCaseKey.self) var exchange: any ExchangeUseCase
}

struct KeyPathHolder {
    @Injected(\.exchange) var exchange: any ExchangeUseCase
}

/// Upstream's documentation writes `@Injected(Key.self)` without a type: the key must win over
/// the concrete-type initializer, which would make the property `ExchangeUseCaseKey?`.
struct UnannotatedKeyHolder {
    @Injected(ExchangeUseCaseKey.self) var exchange
}

/// A key whose value is optional, as upstream's documentation writes many.
enum OptionalMailerKey: InjectedKey {
    static var liveValue: Mailer? { nil }
}

extension InjectedValues {
    var optionalMailer: Mailer? {
        get { self[OptionalMailerKey.self] }
        set { self[OptionalMailerKey.self] = newValue }
    }
}

struct OptionalKeyHolder {
    @Injected(\.optionalMailer) var mailer
}

@Suite struct PortingTests {
    @Test func weaveDIIsAnExtendableNamespaceAndStillNamesTheContainer() async {
        let container: WeaveDI.Container = Container()
        #expect(container is DIContainer)
        await withContainer(container) {
            WeaveDI.register { EnglishGreeter(id: 7) as any Greeter }
            let replaced = WeaveDI.builder
                .register { Settings(name: "built") }.scoped(.singleton)
                .register { Counter() }
                .configure()
            #expect(replaced.isEmpty)
            #expect(UnifiedDI.resolve((any Greeter).self)?.greet() == "hello 7")
            #expect(container.registrations.first { $0.key.description == "Settings" }?.scope == .singleton)
            #expect(UnifiedDI.resolve(Counter.self) !== UnifiedDI.resolve(Counter.self)) // transient by default
            let environmentReplaced = WeaveDI.registerForEnvironment { env in
                if env.isTest {
                    env.register { Settings(name: "test") }
                } else {
                    env.register { Settings(name: "live") }
                }
            }
            #expect(environmentReplaced.map(\.description) == ["Settings"])
            #expect(UnifiedDI.resolve(Settings.self)?.name == "test") // swift test is a test run
        }
    }

    @Test func bootstrapsAccumulateAndReportWhatTheyReplace() async throws {
        let container = Container()
        try await withContainer(container) {
            // A user module, an order module and a feature module, each bootstrapping its own.
            try await Container.bootstrap { $0.register(EnglishGreeter.self, scope: .singleton) { EnglishGreeter(id: 1) } }
            try await Container.bootstrap { $0.register(Settings.self) { Settings(name: "orders") } }
            let replaced = try await Container.bootstrap { container in
                container.register("feature", Settings.self) { Settings(name: "feature") }
                container.register(Settings.self) { Settings(name: "feature's") }
                // Not yet visible: the bootstrap's registrations arrive together when it returns.
                #expect(container.resolve("feature", Settings.self) == nil)
            }
            #expect(replaced.map(\.description) == ["Settings"])
            #expect(container.resolve(EnglishGreeter.self)?.id == 1)
            #expect(container.resolve(Settings.self)?.name == "feature's")
            #expect(container.resolve("feature", Settings.self)?.name == "feature")
            await #expect(throws: Failure.self) {
                try await Container.bootstrap { container in
                    container.register(Counter.self) { Counter() }
                    throw Failure(code: 1)
                }
            }
            #expect(container.resolve(Counter.self) == nil) // a failed bootstrap adds nothing
        }
    }

    @Test func aResolveNeverSeesHalfABootstrap() async throws {
        let container = Container()
        let halves = Locked(0)
        try await withContainer(container) {
            let reader = Task.detached {
                for _ in 0..<200_000 {
                    // Registered in one bootstrap: either both are there or neither.
                    let first = container.resolve(CycleA.self) != nil
                    let second = container.resolve(CycleB.self) != nil
                    if first && !second { halves.withLock { $0 += 1 } }
                    if first { break }
                }
            }
            try await Container.bootstrap { container in
                container.register(CycleB.self) { CycleB() }
                for index in 0..<100 { container.register("filler-\(index)", Int.self) { index } }
                container.register(CycleA.self) { CycleA() }
            }
            await reader.value
        }
        #expect(halves.withLock { $0 } == 0)
    }

    @Test func requiredInjectedResolvesAndOptionalStaysOptional() {
        let container = Container()
        container.register(EnglishGreeter.self) { EnglishGreeter(id: 3) }
        withContainer(container) {
            #expect(RequiredHolder().greeter.id == 3)
            #expect(OptionalHolder().greeter?.id == 3)
        }
        withContainer(Container()) {
            #expect(OptionalHolder().greeter == nil)
        }
    }

    @Test func requiredInjectedTrapsNamingTheMissingType() async {
        await #expect(processExitsWith: .failure) {
            _ = withContainer(Container()) { RequiredHolder().greeter }
        }
    }

    @Test func injectedWithAKeyTypeYieldsTheKeysValue() {
        withContainer(Container()) {
            #expect(KeyHolder().exchange.rate == 0.5) // the key's testValue under swift test
            withInjectedValues({ $0.exchange = RegisteredExchange() }) {
                #expect(KeyHolder().exchange.rate == 2.2)
            }
        }
    }

    @Test func anUnannotatedKeyWrapperReadsTheKey() {
        withContainer(Container()) {
            let holder = UnannotatedKeyHolder()
            let exchange: any ExchangeUseCase = holder.exchange // compiles only if the key won
            #expect(exchange.rate == 0.5)
        }
    }

    @Test func aKeyWithAnOptionalValueSeesTheWrappedTypesRegistration() {
        let container = Container()
        withContainer(container) { #expect(OptionalKeyHolder().mailer == nil) } // the default, nil
        #expect(container.statistics().services.allSatisfy { $0.errorCount == 0 })
        let mailer = Mailer()
        container.register(Mailer.self, instance: mailer)
        withContainer(container) { #expect(OptionalKeyHolder().mailer === mailer) }
        #expect(container.statistics()["Mailer"]?.resolutions == 1)
        withContainer(container) {
            withInjectedValues({ $0.optionalMailer = nil }) { #expect(OptionalKeyHolder().mailer == nil) } // an override of nil wins
        }
    }

    @Test func containerRegistrationsReachInjectedValuesWithTheirPrecedence() async {
        let container = Container()
        // Not registered: the key's default, and the miss is no resolution error.
        withContainer(container) { #expect(KeyPathHolder().exchange.rate == 0.5) }
        #expect(container.statistics().services.allSatisfy { $0.errorCount == 0 })
        // Registered in the container: the container's, counted as a resolve.
        container.register((any ExchangeUseCase).self) { RegisteredExchange() }
        withContainer(container) { #expect(KeyPathHolder().exchange.rate == 2.2) }
        #expect(container.statistics()[String(describing: (any ExchangeUseCase).self)]?.resolutions == 1)
        // A child container sees its parent's.
        withContainer(container.createChild()) { #expect(KeyPathHolder().exchange.rate == 2.2) }
        // A task-local override wins over both.
        await withContainer(container) {
            await withInjectedValues({ $0.exchange = LiveExchange() }) {
                #expect(KeyPathHolder().exchange.rate == 1.1)
            }
        }
        // Another container without the registration: the default again.
        withContainer(Container()) { #expect(KeyPathHolder().exchange.rate == 0.5) }
    }

    @Test func smallerUpstreamNames() async throws {
        #expect(ExchangeUseCaseKey.previewValue.rate == 1.1)
        // `shared` is `live`; LiveContainerTests, running meanwhile, may swap `live` between the two reads.
        #expect((0..<1_000).contains { _ in Container.shared === Container.live })
        let container = Container()
        try await withContainer(container) {
            UnifiedDI.register(\.mailer) { Mailer() }
            #expect(UnifiedDI.resolve(\.mailer) != nil)
            #expect(MailerHolder().mailer !== MailerHolder().mailer) // @Factory: a new one each time
            UnifiedDI.registerIf(Settings.self, condition: false, factory: { Settings(name: "yes") }, fallback: { Settings(name: "no") })
            #expect(container.resolve(Settings.self)?.name == "no")
            // Quiet: the miss is neither counted nor logged; with logOnMiss it is both, as resolve does.
            #expect(UnifiedDI.resolve(Counter.self, logOnMiss: false) == nil)
            #expect(container.statistics()["Counter"] == nil)
            #expect(UnifiedDI.resolve(Counter.self, logOnMiss: true) == nil)
            #expect(container.statistics()["Counter"]?.errors[.notRegistered] == 1)
            UnifiedDI.registerAsync(Repository.self, scope: .singleton) {
                await Task.yield()
                return Repository(settings: Settings(name: "async"))
            }
            let repository = try await UnifiedDI.resolveAsync(Repository.self)
            #expect(repository.settings.name == "async")
            #expect(UnifiedDI.release(Repository.self))
            #expect(!UnifiedDI.release(Repository.self))
            #expect(container.resolve(Settings.self) != nil) // the others stay
            #expect(container.resolveOrDefault(Counter.self, default: Counter()).count == 0)
        }
        UnifiedRegistry.shared.enableOptimization()
        let child = Container().createChild()
        #expect(child.parent != nil)
    }

    @Test func staticContainerRegistrationGoesToTheCurrentContainer() {
        let container = Container()
        withContainer(container) {
            DIContainer.register(Settings.self) { Settings(name: "static") }
            #expect(DIContainer.resolve(Settings.self)?.name == "static")
        }
        #expect(container.resolve(Settings.self)?.name == "static")
    }

    /// The documented synchronous, optional resolve, in an async function.
    @Test func synchronousResolveInsideAsyncCode() async {
        let container = Container()
        if container.resolve(Settings.self) == nil { container.register(Settings.self) { Settings(name: "late") } }
        await Task.yield()
        #expect(container.resolve(Settings.self)?.name == "late")
    }
}
