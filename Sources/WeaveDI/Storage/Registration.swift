import Synchronization
import WeaveSupport

/// What a container keeps for one key: how to make the service, its scope, and what it made.
/// Instances of `Registration<T>` are the only subclass; the table holds them type-erased.
@usableFromInline
class AnyRegistration: @unchecked Sendable {
    // @unchecked: the mutable state of subclasses is guarded by the owning container's ShardedLock
    // (read under one shard, written under all), or by the registration's own gates.
    @usableFromInline let key: RegistrationKey
    /// `key.typeID`, stored flat for the hot path.
    @usableFromInline let typeID: ObjectIdentifier
    /// The `KeyHash` the table files the key under.
    @usableFromInline let keyHash: UInt64
    @usableFromInline let scope: Scope
    /// Dense index of the key in the container, for per-shard counters; kept when the key is re-registered.
    @usableFromInline let index: Int
    /// Unique in the process and never reused, unlike the address: names the registration in the
    /// threads' `EdgeMemo`s.
    @usableFromInline let serial = Serials.next()
    /// Keeps the fields the hot path reads (above) off the cache line of whatever is allocated next.
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Whether a factory run of this registration was offered to its container's startup tree:
    /// written once, so later runs only read it (`Container.startup`).
    let offeredToStartup = Atomic<Bool>(false)

    /// True for the first caller only: the run to offer to the startup tree.
    func offersFirstRunToStartup() -> Bool {
        !offeredToStartup.load(ordering: .relaxed)
            && offeredToStartup.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    }

    init(key: RegistrationKey, scope: Scope, index: Int) {
        self.key = key
        self.typeID = key.typeID
        self.keyHash = KeyHash.of(key.typeID, name: key.name)
        self.scope = scope
        self.index = index
    }

    /// Whether an instance is held right now. Call under the container's read lock.
    var isInstantiated: Bool { false }

    /// Whether its factory can throw (a throwing or async factory): its failures are
    /// `factoryFailed` errors.
    var factoryCanThrow: Bool { false }

    /// Removes the held instance and returns it, so the caller can drop it outside the lock.
    /// Call under the container's write lock.
    func takeInstance() -> Any? { nil }

    /// The shared instance for a health round, if one exists; else, when `making` says yes of the
    /// registered type, made (an async factory awaited). Reading it is not a resolve, so it adds
    /// nothing to the resolve count or the latency histograms; a factory run here is counted as the
    /// creation it is (`instancesCreated`, the factory histogram). `nil` for transient scopes.
    func sharedInstance(in container: Container, making: (Any.Type) -> Bool) async -> Any? { nil }
}

/// A factory that takes one argument, type-erased; a resolve compares `argumentType` with its
/// argument's type before it downcasts (no dynamic cast).
@usableFromInline
class AnyArgumentFactory: @unchecked Sendable {
    // @unchecked: immutable.
    @usableFromInline let argumentType: ObjectIdentifier
    init(argumentType: ObjectIdentifier) { self.argumentType = argumentType }

    /// This factory, typed, if it takes an `Arg`; `nil` otherwise. `T` must be the type it is
    /// registered under (so the factory makes a `T`).
    @inlinable
    func taking<Arg, T>(_: Arg.Type, making _: T.Type) -> ArgumentFactory<Arg, T>? {
        argumentType == ObjectIdentifier(Arg.self) ? unsafeDowncast(self, to: ArgumentFactory<Arg, T>.self) : nil
    }
}

@usableFromInline
final class ArgumentFactory<Argument, Value>: AnyArgumentFactory, @unchecked Sendable {
    // @unchecked: immutable.
    @usableFromInline let make: @Sendable (Argument) -> Value
    init(_ make: @escaping @Sendable (Argument) -> Value) {
        self.make = make
        super.init(argumentType: ObjectIdentifier(Argument.self))
    }
}

/// How a registration makes its value.
@usableFromInline
enum Maker<Value>: Sendable {
    case sync(@Sendable () -> Value)
    case throwing(@Sendable () throws -> Value)
    case async(@Sendable () async throws -> Value)
    case argument(AnyArgumentFactory, argumentType: String)
    case instance
}

/// Moves a non-Sendable value between the task that created it and the tasks awaiting it.
struct HandOff<Value>: @unchecked Sendable {
    // @unchecked: a container shares what it makes across threads by design; services registered
    // with a shared scope must be safe to use from any thread, as the README says.
    let value: Value
}

@usableFromInline
final class Registration<Value>: AnyRegistration, @unchecked Sendable {
    @usableFromInline let maker: Maker<Value>
    /// `maker`'s factory when it is `.sync`, for the transient fast path: called from a stored
    /// property of a guaranteed reference, it is borrowed, where one taken out of the enum is
    /// copied, and its context's reference count written, on every run.
    @usableFromInline let synchronousFactory: @Sendable () -> Value
    /// `maker`'s factory when it is `.argument`, for `resolve(_:argument:)`, read in place for the same reason.
    @usableFromInline let argumentFactory: AnyArgumentFactory?
    /// The shared instance of `.singleton`/`.cached` scopes, behind a pointer so the hot path pays
    /// no dynamic exclusivity check (the container's lock already orders every access).
    @usableFromInline let instanceSlot: UnsafeMutablePointer<Value?>
    /// The instance of the `.weak` scope.
    weak var weakInstance: AnyObject?
    /// Serialises creation of shared-scope instances by synchronous factories.
    let gate: CreationGate?
    /// The creation in flight of an async factory with a shared scope.
    let inflight = Locked<Task<HandOff<Value>, any Error>?>(nil)

    init(key: RegistrationKey, scope: Scope, index: Int, maker: Maker<Value>, instance: Value? = nil) {
        self.maker = maker
        if case .sync(let factory) = maker {
            synchronousFactory = factory
        } else {
            synchronousFactory = { preconditionFailure("only .sync registrations take the transient fast path") }
        }
        if case .argument(let factory, _) = maker { argumentFactory = factory } else { argumentFactory = nil }
        // A cache line of its own: every resolve of the key reads it, and a neighbour that is
        // written often (the instance's own reference count, allocated next to it) would make
        // those reads miss on every core.
        self.instanceSlot = UnsafeMutableRawPointer.allocate(
            byteCount: max(128, MemoryLayout<Value?>.stride), alignment: max(128, MemoryLayout<Value?>.alignment)
        ).bindMemory(to: Value?.self, capacity: 1)
        self.instanceSlot.initialize(to: instance)
        self.gate = scope == .transient ? nil : CreationGate(name: key.description)
        super.init(key: key, scope: scope, index: index)
    }

    override var factoryCanThrow: Bool {
        switch maker {
        case .throwing, .async: true
        case .sync, .argument, .instance: false
        }
    }

    deinit {
        instanceSlot.deinitialize(count: 1)
        UnsafeMutableRawPointer(instanceSlot).deallocate()
    }

    /// The shared instance. Read under the container's read lock, write under its write lock.
    @inlinable var instance: Value? {
        get { instanceSlot.pointee }
        set { instanceSlot.pointee = newValue }
    }

    override var isInstantiated: Bool {
        scope == .weak ? weakInstance != nil : instance != nil
    }

    override func sharedInstance(in container: Container, making: (Any.Type) -> Bool) async -> Any? {
        switch scope {
        case .transient:
            return nil
        case .weak:
            return container.lock.withReadLock { _ in weakInstance }
        case .singleton, .cached:
            if let held = container.lock.withReadLock({ _ in instance }) { return held }
            guard making(Value.self) else { return nil }
            // `counted: true`: the look-up does not count a resolve (a health round is not one).
            if case .async = maker { return try? await container.resolveAwaiting(Value.self, name: key.name, counted: true) }
            return try? container.resolveValue(Value.self, name: key.name, counted: true)
        }
    }

    override func takeInstance() -> Any? {
        defer { instance = nil }
        return instance
    }
}
