import Testing
@testable import WeaveDI

@Suite struct ScopeTests {
    @Test func transientMakesANewInstanceEachTime() {
        let container = Container()
        let made = Counter()
        container.register(EnglishGreeter.self) { EnglishGreeter(id: made.next()) }
        let first = container.resolve(EnglishGreeter.self)
        let second = container.resolve(EnglishGreeter.self)
        #expect(first?.id == 1)
        #expect(second?.id == 2)
        #expect(first !== second)
    }

    @Test func singletonIsCreatedLazilyAndOnce() {
        let container = Container()
        let made = Counter()
        container.register(EnglishGreeter.self, scope: .singleton) { EnglishGreeter(id: made.next()) }
        #expect(made.count == 0)
        let first = container.resolve(EnglishGreeter.self)
        let second = container.resolve(EnglishGreeter.self)
        #expect(first === second)
        #expect(made.count == 1)
    }

    @Test func singletonIsCreatedExactlyOnceUnderA1000TaskRace() async {
        let container = Container()
        let made = Counter()
        container.register(EnglishGreeter.self, scope: .singleton) {
            // Widen the race window: every task gets to the factory before the first one finishes.
            for _ in 0..<10_000 { _ = made.count }
            return EnglishGreeter(id: made.next())
        }
        let ids = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<1_000 { group.addTask { container.resolve(EnglishGreeter.self)?.id } }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(made.count == 1)
        #expect(Set(ids) == [1])
    }

    @Test func cachedIsSharedUntilEvicted() {
        let container = Container()
        let made = Counter()
        container.register(EnglishGreeter.self, scope: .cached) { EnglishGreeter(id: made.next()) }
        container.register(Settings.self, scope: .singleton) { Settings(name: "kept") }
        let first = container.resolve(EnglishGreeter.self)
        #expect(container.resolve(EnglishGreeter.self) === first)
        _ = container.resolve(Settings.self)
        #expect(container.evictCached() == 1)
        let second = container.resolve(EnglishGreeter.self)
        #expect(second !== first)
        #expect(second?.id == 2)
        #expect(container.registrations.first { $0.key.typeName == "Settings" }?.isInstantiated == true)
    }

    @Test func weakIsKeptOnlyWhileHeldElsewhere() {
        let container = Container()
        let made = Counter()
        container.register(EnglishGreeter.self, scope: .weak) { EnglishGreeter(id: made.next()) }
        var held = container.resolve(EnglishGreeter.self)
        #expect(container.resolve(EnglishGreeter.self) === held)
        #expect(made.count == 1)
        held = nil
        #expect(held == nil)
        let again = container.resolve(EnglishGreeter.self)
        #expect(again?.id == 2)
    }

    @Test func weakScopeRejectsValueTypes() {
        let container = Container()
        container.register(Settings.self, scope: .weak) { Settings(name: "value") }
        #expect(throws: ResolutionError.self) { try container.resolveThrows(Settings.self) }
        do {
            _ = try container.resolveThrows(Settings.self)
        } catch {
            guard case .factoryFailed(_, let underlying) = error else { Issue.record("got \(error)"); return }
            #expect(underlying is RegistrationUsageError)
        }
    }

    @Test func instanceRegistrationActsAsSingleton() {
        let container = Container()
        let greeter = EnglishGreeter(id: 7)
        container.register(EnglishGreeter.self, instance: greeter)
        #expect(container.resolve(EnglishGreeter.self) === greeter)
        #expect(container.registrations.first?.scope == .singleton)
        #expect(container.registrations.first?.isInstantiated == true)
    }

    @Test func protocolRegistrationResolvesTheConcreteInstance() {
        let container = Container()
        container.register((any Greeter).self, scope: .singleton) { EnglishGreeter(id: 3) }
        let greeter = container.resolve((any Greeter).self)
        #expect(greeter?.greet() == "hello 3")
        #expect(container.resolve(EnglishGreeter.self) == nil)
    }
}
