import Testing
@testable import WeaveDI
import WeaveSupport

private let configuredOrder = Locked<[String]>([])

private enum NetworkModule: FeatureModule {
    static let name = "test.network"
    static func configure() async { configuredOrder.withLock { $0.append(name) } }
}

private enum StorageModule: FeatureModule {
    static let name = "test.storage"
    static func dependencies() -> [String] { ["test.network"] }
    static func configure() async { configuredOrder.withLock { $0.append(name) } }
}

private enum AppModule: FeatureModule {
    static let name = "test.app"
    static func dependencies() -> [String] { ["test.storage", "test.network"] }
    static func configure() async { configuredOrder.withLock { $0.append(name) } }
}

private enum LoopA: FeatureModule {
    static let name = "loop.a"
    static func dependencies() -> [String] { ["loop.b"] }
    static func configure() async { configuredOrder.withLock { $0.append(name) } }
}

private enum LoopB: FeatureModule {
    static let name = "loop.b"
    static func dependencies() -> [String] { ["loop.a"] }
    static func configure() async { configuredOrder.withLock { $0.append(name) } }
}

private enum Orphan: FeatureModule {
    static let name = "orphan"
    static func dependencies() -> [String] { ["nowhere"] }
    static func configure() async { configuredOrder.withLock { $0.append(name) } }
}

@Suite(.serialized) struct ModuleTests {
    @Test func modulesRunInDependencyOrderOnce() async throws {
        // A container of its own: `Container.live`, which LiveContainerTests reassign meanwhile,
        // could be another container at the second call, which would configure them all again.
        try await withContainer(Container()) {
            try await ModuleManager.configureModules([AppModule.self, StorageModule.self, NetworkModule.self])
            try await ModuleManager.configureModules([NetworkModule.self, AppModule.self, StorageModule.self])
            #expect(ModuleManager.isConfigured("test.app"))
        }
        let order = configuredOrder.withLock { $0.filter { $0.hasPrefix("test.") } }
        #expect(order == ["test.network", "test.storage", "test.app"])
    }

    /// A module is configured once per container, not once per process: another container (a
    /// test's) configures it afresh, and registers in itself.
    @Test func eachContainerConfiguresItsOwnModules() async throws {
        let container = Container()
        try await withContainer(container) {
            #expect(!ModuleManager.isConfigured("test.network"))
            try await ModuleManager.configureModules([NetworkModule.self])
            #expect(ModuleManager.isConfigured("test.network"))
        }
        #expect(container.configuredModules.withLock { $0 } == ["test.network"])
        #expect(!Container().configuredModules.withLock { $0.contains("test.network") })
    }

    @Test func moduleCycleThrowsWithThePath() async {
        await #expect(throws: ModuleError.cycle(["loop.a", "loop.b", "loop.a"])) {
            try await ModuleManager.configureModules([LoopA.self, LoopB.self])
        }
        #expect(!ModuleManager.isConfigured("loop.a"))
    }

    @Test func missingDependencyIsNamed() async {
        await #expect(throws: ModuleError.missingDependency(module: "orphan", dependency: "nowhere")) {
            try await ModuleManager.configureModules([Orphan.self])
        }
        #expect(ModuleError.missingDependency(module: "orphan", dependency: "nowhere").description.contains("nowhere"))
    }
}
