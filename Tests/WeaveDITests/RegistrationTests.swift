import Testing
@testable import WeaveDI

@Suite struct RegistrationTests {
    @Test func namedKeysLiveBesideTheDefault() {
        let container = Container()
        container.register(Settings.self) { Settings(name: "default") }
        container.register("eu", Settings.self) { Settings(name: "eu") }
        container.register("us", Settings.self) { Settings(name: "us") }
        #expect(container.resolve(Settings.self)?.name == "default")
        #expect(container.resolve("eu", Settings.self)?.name == "eu")
        #expect(container.resolve("us", Settings.self)?.name == "us")
        #expect(container.resolve("asia", Settings.self) == nil)
        #expect(throws: ResolutionError.self) { try container.resolveThrows("asia", Settings.self) }
    }

    @Test func lastRegistrationWins() {
        let container = Container()
        container.register(Settings.self, scope: .singleton) { Settings(name: "first") }
        #expect(container.resolve(Settings.self)?.name == "first")
        container.register(Settings.self, scope: .singleton) { Settings(name: "second") }
        #expect(container.resolve(Settings.self)?.name == "second")
        #expect(container.registrations.count == 1)
        #expect(container.registrations[0].hitCount == 2)
    }

    @Test func argumentFactories() {
        let container = Container()
        container.register(Repository.self) { (settings: Settings) in Repository(settings: settings) }
        let repository = container.resolve(Repository.self, argument: Settings(name: "db"))
        #expect(repository?.settings.name == "db")
    }

    @Test func argumentOfTheWrongTypeIsAMismatch() throws {
        let container = Container()
        container.register(Repository.self) { (settings: Settings) in Repository(settings: settings) }
        #expect(container.resolve(Repository.self, argument: 42) == nil)
        #expect(container.resolve(Repository.self) == nil)
        let error = try #require(throws: ResolutionError.self) { try container.resolveThrows(Repository.self) }
        guard case .argumentMismatch(let type, let expected, let actual) = error else {
            Issue.record("got \(error)"); return
        }
        #expect(type == "Repository")
        #expect(expected == "an argument of type Settings")
        #expect(actual == "no argument")
        do {
            _ = try container.resolveValue(Repository.self, argument: 42)
        } catch {
            guard case .argumentMismatch(_, _, let actual) = error else { Issue.record("got \(error)"); return }
            #expect(actual == "an argument of type Int")
        }
    }

    @Test func asyncFactoriesResolveWithAwait() async throws {
        let container = Container()
        let made = Counter()
        container.register(EnglishGreeter.self, scope: .singleton) { () async throws -> EnglishGreeter in
            try await Task.sleep(for: .milliseconds(5))
            return EnglishGreeter(id: made.next())
        }
        let greeters = try await withThrowingTaskGroup(of: EnglishGreeter.self) { group in
            for _ in 0..<50 { group.addTask { try await container.resolveAsync(EnglishGreeter.self) } }
            return try await group.reduce(into: [EnglishGreeter]()) { $0.append($1) }
        }
        #expect(made.count == 1)
        #expect(Set(greeters.map(ObjectIdentifier.init)).count == 1)
    }

    @Test func asyncFactoryThroughSyncAPIExplainsItself() throws {
        let container = Container()
        container.register(Settings.self) { () async throws -> Settings in Settings(name: "async") }
        let error = try #require(throws: ResolutionError.self) { try container.resolveThrows(Settings.self) }
        #expect(error.description.contains("try await"))
    }

    @Test func asyncResolveFallsBackToSyncFactories() async throws {
        let container = Container()
        container.register(Settings.self) { Settings(name: "sync") }
        let settings: Settings = try await container.resolveAsync(Settings.self)
        #expect(settings.name == "sync")
    }

    @Test func asyncFactoryErrorsAreWrapped() async throws {
        let container = Container()
        container.register(Settings.self, scope: .singleton) { () async throws -> Settings in throw Failure(code: 9) }
        do {
            let _: Settings = try await container.resolveAsync(Settings.self)
            Issue.record("expected a throw")
        } catch {
            guard case .factoryFailed(let type, let underlying) = error else { Issue.record("got \(error)"); return }
            #expect(type == "Settings")
            #expect(underlying as? Failure == Failure(code: 9))
        }
    }

    @Test func throwingFactoriesReportFactoryFailed() throws {
        let container = Container()
        container.register(Settings.self, throwingFactory: { throw Failure(code: 1) })
        #expect(container.resolve(Settings.self) == nil)
        let error = try #require(throws: ResolutionError.self) { try container.resolveThrows(Settings.self) }
        #expect(error.kind == .factoryFailed)
    }

    @Test func defaultValueWhenMissing() {
        let container = Container()
        #expect(container.resolve(Settings.self, default: Settings(name: "fallback")).name == "fallback")
        container.register(Settings.self) { Settings(name: "registered") }
        #expect(container.resolve(Settings.self, default: Settings(name: "fallback")).name == "registered")
    }

    @Test func factoriesMayResolveAndRegister() {
        let container = Container()
        container.register(Settings.self) {
            container.register("late", Settings.self) { Settings(name: "late") }
            return Settings(name: "outer")
        }
        container.register(Repository.self, scope: .singleton) {
            Repository(settings: container.resolve(Settings.self)!)
        }
        #expect(container.resolve(Repository.self)?.settings.name == "outer")
        #expect(container.resolve("late", Settings.self)?.name == "late")
    }

    @Test func releaseAllRemovesEverything() {
        let container = Container()
        container.register(Settings.self, scope: .singleton) { Settings(name: "a") }
        _ = container.resolve(Settings.self)
        container.releaseAll()
        #expect(container.registrations.isEmpty)
        #expect(container.resolve(Settings.self) == nil)
        container.register(Settings.self) { Settings(name: "b") }
        #expect(container.resolve(Settings.self)?.name == "b")
        #expect(container.registrations[0].hitCount == 1)
    }
}
