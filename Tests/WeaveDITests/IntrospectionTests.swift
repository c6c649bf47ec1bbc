import Testing
@testable import WeaveDI
import WeaveSupport

@Suite struct IntrospectionTests {
    @Test func registrationsListKeysScopesHitsAndInstances() {
        let container = Container()
        container.register(Settings.self, scope: .singleton) { Settings(name: "s") }
        container.register("eu", Settings.self) { Settings(name: "eu") }
        container.register(Repository.self, scope: .cached) { Repository(settings: Settings(name: "r")) }
        for _ in 0..<3 { _ = container.resolve(Settings.self) }
        _ = container.resolve("eu", Settings.self)
        let info = container.registrations
        #expect(info.map(\.key.description) == ["Repository", "Settings", "eu (Settings)"])
        #expect(info.map(\.scope) == [.cached, .singleton, .transient])
        #expect(info.map(\.hitCount) == [0, 3, 1])
        #expect(info.map(\.isInstantiated) == [false, true, false])
    }

    @Test func dependencyGraphRecordsEdgesWithDOTAndJSON() {
        let container = Container()
        container.register(Settings.self, scope: .singleton) { Settings(name: "s") }
        container.register(Repository.self) { Repository(settings: container.resolve(Settings.self)!) }
        container.register(EnglishGreeter.self) {
            _ = container.resolve(Repository.self)
            _ = container.resolve(Settings.self)
            return EnglishGreeter()
        }
        _ = container.resolve(EnglishGreeter.self)
        _ = container.resolve(EnglishGreeter.self)
        let graph = container.dependencyGraph()
        let pairs = graph.edges.map { "\($0.from)->\($0.to)" }
        #expect(pairs == ["EnglishGreeter->Repository", "EnglishGreeter->Settings", "Repository->Settings"])
        #expect(graph.dot.contains("\"Repository\" -> \"Settings\";"))
        #expect(graph.dot.hasPrefix("digraph WeaveDI {"))
        #expect(graph.json == #"{"edges":[{"from":"EnglishGreeter","to":"Repository"},{"from":"EnglishGreeter","to":"Settings"},{"from":"Repository","to":"Settings"}]}"#)
    }

    @Test func jsonQuotingEscapesControlCharacters() {
        #expect(JSONText.quoted("a\"b\\c\n\u{01}") == #""a\"b\\c\n\u0001""#)
    }
}
