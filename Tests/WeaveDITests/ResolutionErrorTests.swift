import Dispatch
import Testing
@testable import WeaveDI
import WeaveSupport

struct UserRepository: Sendable {}
struct UserRepositoryMock: Sendable {}
struct OrderService: Sendable {}

@Suite struct ResolutionErrorTests {
    @Test func missingRegistrationNamesTheTypeAndSuggestsNearNames() throws {
        let container = Container()
        container.register(UserRepositoryMock.self) { UserRepositoryMock() }
        container.register(OrderService.self) { OrderService() }
        let error = try #require(throws: ResolutionError.self) { try container.resolveThrows(UserRepository.self) }
        guard case .notRegistered(let type, let suggestions) = error else { Issue.record("got \(error)"); return }
        #expect(type == "UserRepository")
        #expect(suggestions == ["UserRepositoryMock"])
        #expect(error.description.contains("did you mean UserRepositoryMock"))
    }

    @Test func suggestionsCoverTypos() {
        #expect(NameSuggestions.nearest(to: "OrderServce", among: ["OrderService", "Settings"]) == ["OrderService"])
        #expect(NameSuggestions.nearest(to: "Clock", among: ["Settings"]).isEmpty)
        #expect(NameSuggestions.editDistance(Array("kitten"), Array("sitting")) == 3)
    }

    @Test func cycleReportsItsPath() throws {
        let container = Container()
        container.register(CycleA.self, throwingFactory: { _ = try container.resolveThrows(CycleB.self); return CycleA() })
        container.register(CycleB.self, throwingFactory: { _ = try container.resolveThrows(CycleC.self); return CycleB() })
        container.register(CycleC.self, throwingFactory: { _ = try container.resolveThrows(CycleA.self); return CycleC() })
        let error = try #require(throws: ResolutionError.self) { try container.resolveThrows(CycleA.self) }
        guard case .cycle(let path) = error else { Issue.record("got \(error)"); return }
        #expect(path == ["CycleA", "CycleB", "CycleC", "CycleA"])
        #expect(error.description.contains("CycleA → CycleB → CycleC → CycleA"))
    }

    @Test func singletonSelfCycleIsAnErrorNotADeadlock() throws {
        let container = Container()
        container.register(CycleA.self, scope: .singleton, throwingFactory: {
            _ = try container.resolveThrows(CycleA.self)
            return CycleA()
        })
        let error = try #require(throws: ResolutionError.self) { try container.resolveThrows(CycleA.self) }
        guard case .cycle(let path) = error else { Issue.record("got \(error)"); return }
        #expect(path == ["CycleA", "CycleA"])
    }

    @Test func cycleThroughOptionalResolveEndsInNil() {
        let container = Container()
        container.register(CycleA.self) { _ = container.resolve(CycleB.self); return CycleA() }
        container.register(CycleB.self) { container.resolve(CycleA.self) == nil ? CycleB() : CycleB() }
        #expect(container.resolve(CycleA.self) != nil)
    }

    @Test func asyncCycleReportsItsPath() async throws {
        let container = Container()
        container.register(CycleA.self, scope: .singleton) { () async throws -> CycleA in
            let _: CycleB = try await container.resolveAsync(CycleB.self)
            return CycleA()
        }
        container.register(CycleB.self) { () async throws -> CycleB in
            let _: CycleA = try await container.resolveAsync(CycleA.self)
            return CycleB()
        }
        do {
            let _: CycleA = try await container.resolveAsync(CycleA.self)
            Issue.record("expected a cycle")
        } catch {
            guard case .cycle(let path) = error else { Issue.record("got \(error)"); return }
            #expect(path == ["CycleA", "CycleB", "CycleA"])
        }
    }

    @Test func concurrentResolvesOfOneTypeAreNotACycle() async {
        let container = Container()
        container.register(Repository.self) {
            Repository(settings: container.resolve(Settings.self)!)
        }
        container.register(Settings.self) { Settings(name: "x") }
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { container.resolve(Repository.self) != nil } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 })
    }

    @Test func optionalGetValueThrowsNotRegistered() throws {
        let missing: UserRepository? = nil
        let error = try #require(throws: ResolutionError.self) { try missing.getValue() }
        guard case .notRegistered(let type, _) = error else { Issue.record("got \(error)"); return }
        #expect(type == "UserRepository")
        let present: Settings? = Settings(name: "here")
        #expect(try present.getValue().name == "here")
    }
}

/// Two threads that each create a singleton whose factory needs the other's: before, each waited
/// for the other's creation forever; now the second to wait sees the cycle and reports it.
@Suite struct CrossThreadCycleTests {
    private final class Left: Sendable {}
    private final class Right: Sendable {}

    @Test func aCycleAcrossTwoThreadsIsAnErrorNotADeadlock() throws {
        let container = Container()
        let leftStarted = DispatchSemaphore(value: 0)
        let rightStarted = DispatchSemaphore(value: 0)
        // Each factory waits (bounded) until the other has begun, so both creations are under way
        // when each resolves the other's service.
        container.register(Left.self, scope: .singleton, throwingFactory: {
            leftStarted.signal()
            if rightStarted.wait(timeout: .now() + 5) == .success { rightStarted.signal() } // stays open for a retry
            _ = try container.resolveThrows(Right.self)
            return Left()
        })
        container.register(Right.self, scope: .singleton, throwingFactory: {
            rightStarted.signal()
            if leftStarted.wait(timeout: .now() + 5) == .success { leftStarted.signal() }
            _ = try container.resolveThrows(Left.self)
            return Right()
        })
        let results = Locked<[String]>([])
        let done = DispatchGroup()
        for left in [true, false] {
            DispatchQueue.global().async(group: done) {
                do {
                    if left { _ = try container.resolveThrows(Left.self) } else { _ = try container.resolveThrows(Right.self) }
                    results.withLock { $0.append("resolved") }
                } catch {
                    results.withLock { $0.append("\(error)") }
                }
            }
        }
        // Before the fix this never finished; the threads of a failed run are left blocked.
        try #require(done.wait(timeout: .now() + 20) == .success, "the two threads deadlocked")
        let outcomes = results.withLock { $0 }
        #expect(outcomes.count == 2)
        #expect(outcomes.contains { $0.contains("Left → Right → Left") || $0.contains("Right → Left → Right") }, "\(outcomes)")
    }
}
