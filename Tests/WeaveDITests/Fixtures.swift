@testable import WeaveDI
import WeaveSupport

protocol Greeter: AnyObject, Sendable { func greet() -> String }

final class EnglishGreeter: Greeter {
    let id: Int
    init(id: Int = 0) { self.id = id }
    func greet() -> String { "hello \(id)" }
}

final class Counter: Sendable {
    private let value = Locked(0)
    @discardableResult func next() -> Int { value.withLock { $0 += 1; return $0 } }
    var count: Int { value.withLock { $0 } }
}

struct Settings: Sendable, Equatable { var name: String }

final class Repository: Sendable {
    let settings: Settings
    init(settings: Settings) { self.settings = settings }
}

struct CycleA: Sendable {}
struct CycleB: Sendable {}
struct CycleC: Sendable {}

struct Failure: Error, Equatable { let code: Int }

