import Synchronization

/// What a container keeps for one key: how to make the service, its scope, and what it made.
/// Instances of `Registration<T>` are the only subclass; the table holds them type-erased.
class AnyRegistration: @unchecked Sendable {
    // @unchecked: the mutable state of subclasses is guarded by the owning container's ShardedLock
    // (read under one shard, written under all), or by the registration's own gates.
    let key: RegistrationKey
    let scope: Scope
    /// Dense index of the key in the container, for per-shard counters; kept when the key is re-registered.
    let index: Int

    init(key: RegistrationKey, scope: Scope, index: Int) {
        self.key = key
        self.scope = scope
        self.index = index
    }

    /// Whether an instance is held right now. Call under the container's read lock.
    var isInstantiated: Bool { false }

    /// How the factory is called, for diagnostics: `sync`, `async`, `argument(Int)`, `instance`.
    var factoryKind: String { "" }

    /// Removes the held instance and returns it, so the caller can drop it outside the lock.
    /// Call under the container's write lock.
    func takeInstance() -> Any? { nil }
}

/// A factory that takes one argument, kept as an object so a resolve can check the argument type cheaply.
final class ArgumentFactory<Argument, Value>: Sendable {
    let make: @Sendable (Argument) -> Value
    init(_ make: @escaping @Sendable (Argument) -> Value) { self.make = make }
}

/// How a registration makes its value.
enum Maker<Value>: Sendable {
    case sync(@Sendable () throws -> Value)
    case async(@Sendable () async throws -> Value)
    case argument(AnyObject & Sendable, argumentType: String)
    case instance
}

/// Moves a non-Sendable value between the task that created it and the tasks awaiting it.
struct HandOff<Value>: @unchecked Sendable {
    // @unchecked: a container shares what it makes across threads by design; services registered
    // with a shared scope must be safe to use from any thread, as the README says.
    let value: Value
}

final class Registration<Value>: AnyRegistration, @unchecked Sendable {
    let maker: Maker<Value>
    /// The shared instance of `.singleton`/`.cached` scopes.
    var instance: Value?
    /// The instance of the `.weak` scope.
    weak var weakInstance: AnyObject?
    /// Serialises creation of shared-scope instances by synchronous factories.
    let gate: CreationGate?
    /// The creation in flight of an async factory with a shared scope.
    let inflight = Mutex<Task<HandOff<Value>, any Error>?>(nil)

    init(key: RegistrationKey, scope: Scope, index: Int, maker: Maker<Value>, instance: Value? = nil) {
        self.maker = maker
        self.instance = instance
        self.gate = scope == .transient ? nil : CreationGate()
        super.init(key: key, scope: scope, index: index)
    }

    override var isInstantiated: Bool {
        scope == .weak ? weakInstance != nil : instance != nil
    }

    override var factoryKind: String {
        switch maker {
        case .sync: return "sync"
        case .async: return "async"
        case .argument(_, let argumentType): return "argument(\(argumentType))"
        case .instance: return "instance"
        }
    }

    override func takeInstance() -> Any? {
        defer { instance = nil }
        return instance
    }
}
