import Testing
@testable import WeaveDI

@Suite struct ChildContainerTests {
    @Test func childFallsBackToItsParentAndShadowsIt() {
        let parent = Container()
        parent.register(Settings.self) { Settings(name: "parent") }
        parent.register("shared", Settings.self) { Settings(name: "parent-shared") }
        let child = Container(parent: parent)
        child.register("shared", Settings.self) { Settings(name: "child-shared") }
        #expect(child.resolve(Settings.self)?.name == "parent")
        #expect(child.resolve("shared", Settings.self)?.name == "child-shared")
        #expect(parent.resolve("shared", Settings.self)?.name == "parent-shared")
        #expect(child.registrations.count == 1)
    }

    @Test func missingInTheWholeChainSuggestsFromAncestors() throws {
        let parent = Container()
        parent.register(UserRepositoryMock.self) { UserRepositoryMock() }
        let child = Container(parent: parent)
        let error = try #require(throws: ResolutionError.self) { try child.resolveThrows(UserRepository.self) }
        guard case .notRegistered(_, let suggestions) = error else { Issue.record("got \(error)"); return }
        #expect(suggestions == ["UserRepositoryMock"])
    }

    @Test func parentDoesNotRetainChildren() {
        let parent = Container()
        parent.register(Settings.self, scope: .singleton) { Settings(name: "p") }
        weak var weakChild: Container?
        do {
            let child = Container(parent: parent)
            child.register(EnglishGreeter.self, scope: .singleton) { EnglishGreeter() }
            _ = child.resolve(Settings.self)
            _ = child.resolve(EnglishGreeter.self)
            weakChild = child
            #expect(weakChild != nil)
        }
        #expect(weakChild == nil)
    }
}
