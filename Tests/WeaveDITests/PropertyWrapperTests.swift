import Testing
@testable import WeaveDI

private enum ClockNameKey: InjectedKey {
    static var liveValue: String { "continuous" }
}

extension InjectedValues {
    fileprivate var clockName: String {
        get { self[ClockNameKey.self] }
        set { self[ClockNameKey.self] = newValue }
    }
}

private final class Screen {
    init() {}
    @Inject var settings: Settings?
    @Inject("eu") var euSettings: Settings?
    @Injected var greeter: (any Greeter)?
    @Injected(EnglishGreeter.self) var english
    @Injected(\.clockName) var clockName
    @Factory var repository: Repository
    @SafeInject var missing: UserRepository?
}

/// The same wrappers outside a final class: a class reads them through their `_enclosingInstance`
/// subscript, a struct through `wrappedValue`.
private struct ScreenState {
    @Inject var repository: Repository?
    @Injected var greeter: (any Greeter)?
    @Injected(\.clockName) var clockName
    @SafeInject var missing: UserRepository?
}

private class BaseScreen<Extra> {
    @Inject var repository: Repository?
    @Injected(\.clockName) var clockName
    var extra: Extra?
}

private final class DerivedScreen: BaseScreen<Int> {}

/// A key path held in a variable takes `Injected`'s key-path init; a literal, its function init.
private let clockNamePath: KeyPath<InjectedValues, String> & Sendable = \.clockName

private final class PathScreen {
    @Injected(clockNamePath) var clockName
    @Injected({ $0.clockName.uppercased() }) var shouted
}

private actor ScreenActor {
    @Inject var settings: Settings?
    func settingsName() -> String? { settings?.name }
}

@Suite struct PropertyWrapperTests {
    private func makeContainer() -> Container {
        let container = Container()
        container.register(Settings.self) { Settings(name: "global") }
        container.register("eu", Settings.self) { Settings(name: "eu") }
        container.register((any Greeter).self, scope: .singleton) { EnglishGreeter(id: 1) }
        container.register(EnglishGreeter.self) { EnglishGreeter(id: 2) }
        container.register(Repository.self) { Repository(settings: Settings(name: "repo")) }
        return container
    }

    @Test func wrappersResolveFromTheCurrentContainer() {
        let container = makeContainer()
        withContainer(container) {
            let screen = Screen()
            #expect(screen.settings?.name == "global")
            #expect(screen.euSettings?.name == "eu")
            #expect(screen.greeter?.greet() == "hello 1")
            #expect(screen.english?.id == 2)
            #expect(screen.clockName == "continuous")
            #expect(screen.missing == nil)
            #expect(throws: ResolutionError.self) { try screen.missing.getValue() }
        }
    }

    @Test func wrappersInStructsSubclassesAndActorsKeepTheirFirstValue() async {
        let container = makeContainer()
        await withContainer(container) {
            let state = ScreenState()
            let first = state.repository
            #expect(first?.settings.name == "repo")
            #expect(state.repository === first) // a transient registration, kept by the wrapper
            #expect(state.greeter?.greet() == "hello 1")
            #expect(state.clockName == "continuous")
            #expect(state.missing == nil)
            var copy = state
            #expect(copy.repository === first) // copies share what the wrapper kept
            copy = ScreenState()
            #expect(copy.repository !== first)

            let derived = DerivedScreen()
            let kept = derived.repository
            #expect(kept?.settings.name == "repo")
            #expect(derived.repository === kept)
            #expect((derived as BaseScreen<Int>).repository === kept)
            #expect(derived.clockName == "continuous")

            let actor = ScreenActor()
            #expect(await actor.settingsName() == "global")
        }
    }

    @Test func injectResolvesLazilyAndKeepsTheValue() {
        let container = Container()
        withContainer(container) {
            let screen = Screen()
            #expect(screen.settings == nil)
            container.register(Settings.self) { Settings(name: "late") }
            #expect(screen.settings?.name == "late")
            container.register(Settings.self) { Settings(name: "replaced") }
            #expect(screen.settings?.name == "late")
            #expect(screen.english == nil)
        }
    }

    @Test func factoryMakesANewInstanceOnEveryAccess() {
        let container = makeContainer()
        withContainer(container) {
            let screen = Screen()
            #expect(screen.repository !== screen.repository)
            #expect(screen.repository.settings.name == "repo")
        }
    }

    @Test func injectedKeyPathHonoursOverrides() {
        withInjectedValues({ $0.clockName = "test-clock" }) {
            #expect(Screen().clockName == "test-clock")
            #expect(PathScreen().clockName == "test-clock")
            #expect(PathScreen().shouted == "TEST-CLOCK")
        }
    }
}
