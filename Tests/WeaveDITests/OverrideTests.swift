import Testing
@testable import WeaveDI

private enum GreetingKey: InjectedKey {
    static var liveValue: String { "live" }
    static var testValue: String { "test" }
}

private enum PortKey: InjectedKey {
    static var liveValue: Int { 9000 }
}

/// A key only `ExternalGreetings` answers for.
private enum ExternalGreetingKey: InjectedKey {
    static var liveValue: String { "live" }
}

/// Another dependency system's values, as a bridge installs them: one value, set in a task-local.
private struct ExternalGreetings: ExternalInjectedValues {
    @TaskLocal static var greeting: String?

    func value<K: InjectedKey>(for key: K.Type) -> K.Value? {
        key == ExternalGreetingKey.self ? Self.greeting as? K.Value : nil
    }
}

extension InjectedValues {
    fileprivate var externalGreeting: String {
        get { self[ExternalGreetingKey.self] }
        set { self[ExternalGreetingKey.self] = newValue }
    }
    fileprivate var greeting: String {
        get { self[GreetingKey.self] }
        set { self[GreetingKey.self] = newValue }
    }
    fileprivate var port: Int {
        get { self[PortKey.self] }
        set { self[PortKey.self] = newValue }
    }
}

@Suite struct OverrideTests {
    @Test(arguments: 0..<8)
    func parallelTestsEachSeeTheirOwnContainer(index: Int) async {
        let container = Container()
        container.register(Settings.self) { Settings(name: "test-\(index)") }
        await withContainer(container) {
            UnifiedDI.register("extra", Settings.self) { Settings(name: "extra-\(index)") }
            try? await Task.sleep(for: .milliseconds(1))
            #expect(UnifiedDI.resolve(Settings.self)?.name == "test-\(index)")
            #expect(UnifiedDI.resolve("extra", Settings.self)?.name == "extra-\(index)")
            let child = await Task { UnifiedDI.resolve(Settings.self)?.name }.value
            #expect(child == "test-\(index)")
        }
        #expect(Container.live.resolve("extra", Settings.self) == nil)
    }

    @Test func testValueIsSelectedUnderSwiftTest() {
        #expect(ExecutionContext.current == .test)
        #expect(InjectedValues.current.greeting == "test")
        #expect(InjectedValues.current.port == 9000)
    }

    @Test func contextDetection() {
        let none: (String) -> String? = { _ in nil }
        #expect(ExecutionContext.detect(environment: none, executable: "/srv/app") == .live)
        #expect(ExecutionContext.detect(environment: none, executable: "/x/.build/debug/AppPackageTests.xctest") == .test)
        #expect(ExecutionContext.detect(environment: { $0 == "WEAVEDI_CONTEXT" ? "test" : nil }, executable: "/srv/app") == .test)
        #expect(ExecutionContext.detect(environment: { $0 == "WEAVEDI_CONTEXT" ? "live" : nil },
                                        executable: "/x/AppPackageTests.xctest") == .live)
    }

    @Test func injectedValuesOverridesAreTaskLocal() async {
        await withInjectedValues({ $0.greeting = "mocked" }) {
            #expect(InjectedValues.current.greeting == "mocked")
            let inner = await Task { InjectedValues.current.greeting }.value
            #expect(inner == "mocked")
        }
        #expect(InjectedValues.current.greeting == "test")
    }

    @Test func nestedOverridesReplaceAndAddKeys() {
        withInjectedValues({ $0.greeting = "first"; $0.greeting = "second" }) {
            #expect(InjectedValues.current.greeting == "second")
            withInjectedValues({ $0.port = 1 }) {
                #expect(InjectedValues.current.greeting == "second")
                #expect(InjectedValues.current.port == 1)
                withInjectedValues({ $0.greeting = "third" }) {
                    #expect(InjectedValues.current.greeting == "third")
                    #expect(InjectedValues.current.port == 1)
                }
                #expect(InjectedValues.current.greeting == "second")
            }
            #expect(InjectedValues.current.port == 9000)
        }
        #expect(InjectedValues().greeting == "test")
    }

    @Test func externalValuesComeAfterTheTasksOwnAndBeforeContainers() {
        InjectedValues.installExternalValues(ExternalGreetings())
        let container = Container()
        container.register(String.self) { "registered" }
        withContainer(container) {
            #expect(InjectedValues.current.externalGreeting == "registered")
            ExternalGreetings.$greeting.withValue("external") {
                #expect(InjectedValues.current.externalGreeting == "external")
                withInjectedValues({ $0.externalGreeting = "own" }) {
                    #expect(InjectedValues.current.externalGreeting == "own")
                }
                // A bridge holding the other system's value asks with it instead.
                #expect(InjectedValues.current.value(for: ExternalGreetingKey.self) { "held" } == "held")
            }
        }
        #expect(container.statistics()["String"]?.resolutions == 1)
    }
}
