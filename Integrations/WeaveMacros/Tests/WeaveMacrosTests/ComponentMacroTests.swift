import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import WeaveMacros
import WeaveMacrosPlugin
import XCTest

private let macros: [String: Macro.Type] = ["Component": ComponentMacro.self, "Provide": ProvideMacro.self]

// The expansion and its diagnostics (SwiftSyntaxMacrosTestSupport).
final class ComponentMacroExpansionTests: XCTestCase {
    func testRegistersInDependencyOrderWithTheDeclaredScopes() {
        assertMacroExpansion(
            """
            @Component
            struct AppComponent {
                @Provide func service(repository: Repository, clock: any Clock) -> Service { Service(repository, clock) }
                @Provide(scope: .singleton) func repository(_ database: Database) -> Repository { Repository(database) }
                @Provide(scope: .singleton) var database: Database { Database() }
                @Provide(scope: .cached) var clock: any Clock { SystemClock() }
            }
            """,
            expandedSource: """
            struct AppComponent {
                func service(repository: Repository, clock: any Clock) -> Service { Service(repository, clock) }
                func repository(_ database: Database) -> Repository { Repository(database) }
                var database: Database { Database() }
                var clock: any Clock { SystemClock() }

                /// Registers every `@Provide` of this component in `container` (the current one unless
                /// given), dependencies first, each with its declared scope.
                static func registerAll(into container: WeaveDI.Container = .current) {
                    container.register((Database).self, scope: .singleton) {
                        Self().database
                    }
                    container.register((Repository).self, scope: .singleton) { [unowned container] in
                        Self().repository(container.requireResolve((Database).self))
                    }
                    container.register((any Clock).self, scope: .cached) {
                        Self().clock
                    }
                    container.register((Service).self, scope: .transient) { [unowned container] in
                        Self().service(repository: container.requireResolve((Repository).self), clock: container.requireResolve((any Clock).self))
                    }
                }
            }
            """,
            macros: macros)
    }

    func testAMissingProviderIsACompileTimeError() {
        assertMacroExpansion(
            """
            @Component
            struct AppComponent {
                @Provide func repository(database: Database) -> Repository { Repository(database) }
            }
            """,
            expandedSource: """
            struct AppComponent {
                func repository(database: Database) -> Repository { Repository(database) }
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "no @Provide in AppComponent provides Database, which repository needs; add one",
                               line: 3, column: 30),
            ],
            macros: macros)
    }

    func testACycleIsACompileTimeErrorWithItsPath() {
        assertMacroExpansion(
            """
            @Component
            struct Loop {
                @Provide func a(b: B) -> A { A(b) }
                @Provide func b(c: C) -> B { B(c) }
                @Provide func c(a: A) -> C { C(a) }
            }
            """,
            expandedSource: """
            struct Loop {
                func a(b: B) -> A { A(b) }
                func b(c: C) -> B { B(c) }
                func c(a: A) -> C { C(a) }
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "dependency cycle in Loop: A → B → C → A; break it", line: 3, column: 5),
            ],
            macros: macros)
    }

    func testMisuseIsReported() {
        assertMacroExpansion(
            """
            @Component
            class NotAStruct {}
            @Component
            struct Twice {
                @Provide var first: Database { Database() }
                @Provide var second: Database { Database() }
                @Provide var untyped = Database()
            }
            """,
            expandedSource: """
            class NotAStruct {}
            struct Twice {
                var first: Database { Database() }
                var second: Database { Database() }
                var untyped = Database()
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "@Component applies to a struct", line: 1, column: 1),
                DiagnosticSpec(message: "a @Provide var needs a type annotation: the type it provides", line: 7, column: 5),
                DiagnosticSpec(message: "Database is provided twice in Twice; keep one @Provide for it", line: 6, column: 5),
            ],
            macros: macros)
    }
}

// The generated code compiled and run against a real container.
final class Clockwork: Sendable {}
final class Engine: Sendable {
    let clockwork: Clockwork
    init(clockwork: Clockwork) { self.clockwork = clockwork }
}
struct Car: Sendable {
    let engine: Engine
}

@Component
struct Garage {
    @Provide func car(engine: Engine) -> Car { Car(engine: engine) }
    @Provide(scope: .singleton) func engine(clockwork: Clockwork) -> Engine { Engine(clockwork: clockwork) }
    @Provide(scope: .singleton) var clockwork: Clockwork { Clockwork() }
}

final class ComponentRuntimeTests: XCTestCase {
    func testRegisterAllHonoursScopesAndResolvesDependencies() {
        let container = WeaveDI.Container()
        Garage.registerAll(into: container)
        let first = container.resolve(Car.self)
        let second = container.resolve(Car.self)
        XCTAssertNotNil(first)
        XCTAssertTrue(first?.engine === second?.engine)                    // the singleton engine, once
        XCTAssertTrue(first?.engine.clockwork === container.resolve(Clockwork.self))
        XCTAssertEqual(container.registrations.first { $0.key.description == "Car" }?.scope, .transient)
        XCTAssertEqual(container.registrations.first { $0.key.description == "Engine" }?.scope, .singleton)
        // Registered dependencies first: the graph the factories recorded goes Car → Engine → Clockwork.
        let edges = container.dependencyGraph().edges.map { "\($0.from) → \($0.to)" }.sorted()
        XCTAssertEqual(edges, ["Car → Engine", "Engine → Clockwork"])
    }

    func testRegisterAllUsesTheCurrentContainer() {
        let container = WeaveDI.Container()
        withContainer(container) { Garage.registerAll() }
        XCTAssertNotNil(container.resolve(Car.self))
    }
}
