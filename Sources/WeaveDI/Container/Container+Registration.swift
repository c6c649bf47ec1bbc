import Logging
import Synchronization

// Registration: storing factories and instances under their keys, and taking them out again.
extension Container {
    /// Registers a factory for `type`; registering the same key again replaces it (last one wins).
    public func register<T>(_ type: T.Type = T.self, scope: Scope = .transient, factory: @escaping @Sendable () -> T) {
        store(RegistrationKey(type, name: nil), scope: scope, maker: .sync(factory))
    }

    /// Registers a factory that may throw; a throw surfaces as `ResolutionError.factoryFailed`.
    public func register<T>(_ type: T.Type = T.self, scope: Scope = .transient, throwingFactory: @escaping @Sendable () throws -> T) {
        store(RegistrationKey(type, name: nil), scope: scope, maker: .throwing(throwingFactory))
    }

    /// Registers a factory for `type` under `name`, beside the type's default registration.
    public func register<T>(_ name: String, _ type: T.Type = T.self, scope: Scope = .transient, factory: @escaping @Sendable () -> T) {
        store(RegistrationKey(type, name: name), scope: scope, maker: .sync(factory))
    }

    /// Registers an existing instance; it always acts as a singleton.
    public func register<T>(_ type: T.Type = T.self, instance: T) {
        store(RegistrationKey(type, name: nil), scope: .singleton, maker: Maker<T>.instance, instance: instance)
    }

    /// Registers a factory that takes an argument; resolve it with `resolve(_:argument:)`. Always transient.
    public func register<T, Arg>(_ type: T.Type = T.self, factory: @escaping @Sendable (Arg) -> T) {
        store(RegistrationKey(type, name: nil), scope: .transient,
              maker: Maker<T>.argument(ArgumentFactory(factory), argumentType: String(describing: Arg.self)))
    }

    /// Registers an async factory; resolve it with `try await resolveAsync(_:)`. Shared scopes still run it once.
    public func register<T>(_ type: T.Type = T.self, scope: Scope = .transient, factory: @escaping @Sendable () async throws -> T) {
        store(RegistrationKey(type, name: nil), scope: scope, maker: .async(factory))
    }

    /// `register(_:scope:factory:)` for an async factory, under upstream WeaveDI's name.
    public func registerAsync<T>(_ type: T.Type = T.self, scope: Scope = .transient,
                                 factory: @escaping @Sendable () async throws -> T) {
        register(type, scope: scope, factory: factory)
    }

    private func store<T>(_ key: RegistrationKey, scope: Scope, maker: Maker<T>, instance: T? = nil) {
        let insert = { [self] () -> AnyRegistration? in insertHoldingLock(key, scope: scope, maker: maker, instance: instance) }
        if let staging = Container.staging, staging.container === self {
            staging.inserts.withLock { $0.append((key, insert)) }
            return
        }
        let (replaced, released) = lock.withWriteLock { () -> (AnyRegistration?, [Any]) in
            let replaced = insert()
            return (replaced, retireHoldingLock(replaced.map { [$0] } ?? []))
        }
        if let replaced {
            instrumentation.log(.registration, .debug, "Replaced the registration of \(key) (was \(replaced.scope), now \(scope))",
                                metadata: ["dependency": "\(key)"])
        } else {
            instrumentation.log(.registration, .debug, "Registered \(key) as \(scope)", metadata: ["dependency": "\(key)"])
        }
        // `replaced` (and the instance it may hold) is released here, outside the lock, unless a
        // reader may still use it (`retired`).
        _ = released
    }

    /// Takes registrations out of the table for good (call holding the write lock): returns what to
    /// release outside the lock, the registrations no reader can use any more and the instances of
    /// the others (`RetiredRegistrations`).
    func retireHoldingLock(_ removed: [AnyRegistration]) -> [Any] {
        retired.retire(removed, lock: lock)
    }

    /// Adds the registration to the table (call holding the write lock); returns the one it replaced.
    private func insertHoldingLock<T>(_ key: RegistrationKey, scope: Scope, maker: Maker<T>, instance: T?) -> AnyRegistration? {
        let index: Int
        if let existing = table.lookup(key) {
            index = existing.index
        } else {
            index = nextIndex
            nextIndex += 1
        }
        return table.insert(Registration(key: key, scope: scope, index: index, maker: maker, instance: instance))
    }

    /// Removes the registration of `type` (under `name`) and the instance it holds; returns whether
    /// there was one. The parent is untouched.
    @discardableResult
    public func release<T>(_ type: T.Type, name: String? = nil) -> Bool {
        let key = RegistrationKey(type, name: name)
        let (removed, released) = lock.withWriteLock { () -> (Bool, [Any]) in
            let removed = table.remove(key)
            return (removed != nil, retireHoldingLock(removed.map { [$0] } ?? []))
        }
        if removed { instrumentation.log(.registration, .debug, "Released \(key)") }
        _ = released // the registration (and its instance) is released here, outside the lock
        return removed
    }

    /// Removes every registration and the instances they hold (the parent is untouched).
    public func releaseAll() {
        let dropped = lock.withWriteLock {
            nextIndex = 0
            edgeEpoch.store(Serials.next(), ordering: .relaxed)
            for shard in lock.allShards { shard.counters.pointee.reset() }
            return retireHoldingLock(table.removeAll())
        }
        edges.withLock { $0.removeAll() }
        instrumentation.log(.registration, .debug, "Released all registrations")
        _ = dropped // released here, outside the lock
    }
}
