import WeaveSupport

extension Container {
    /// Keys whose async factories are running in the current task, outermost first.
    @TaskLocal static var asyncStack: [RegistrationKey] = []
    /// The async factory run in progress in the current task, in its outermost run's trace.
    @TaskLocal static var asyncRun: AsyncResolutionTrace.Run?

    /// The service registered for `type`, awaiting its factory if it is async (a sync factory runs as
    /// `resolve` would run it). Upstream WeaveDI's name; `resolve` stays synchronous everywhere, so
    /// `container.resolve(T.self) == nil` means the same in async code as in sync code.
    public func resolveAsync<T>(_ type: T.Type = T.self) async throws(ResolutionError) -> T {
        try await resolveAwaiting(type, name: nil)
    }

    /// The service registered for `type` under `name`, awaiting an async factory.
    public func resolveAsync<T>(_ name: String, _ type: T.Type = T.self) async throws(ResolutionError) -> T {
        try await resolveAwaiting(type, name: name)
    }

    /// `counted`: as `find`'s; `true` leaves this container's resolve count alone (a health round's look-up).
    func resolveAwaiting<T>(_ type: T.Type, name: String?, counted: Bool = false) async throws(ResolutionError) -> T {
        let (owner, found) = try find(type, name: name, counted: counted)
        switch found {
        case .instance(let instance, _, _):
            return instance
        case .registration(let registration):
            let made = if case .async(let factory) = registration.maker {
                try await owner.produceAsync(registration, factory)
            } else {
                try owner.produce(registration)
            }
            succeeded(registration, in: owner, counted: counted)
            return made
        case .missing:
            preconditionFailure("find never returns .missing")
        }
    }

    /// Runs an async factory as its scope requires; shared scopes run it once, later callers await it.
    private func produceAsync<T>(
        _ registration: Registration<T>, _ factory: @escaping @Sendable () async throws -> T
    ) async throws(ResolutionError) -> T {
        let key = registration.key
        let stack = Container.asyncStack
        do {
            try checkCycle(key, stack: stack)
        } catch {
            throw failed(error, index: registration.index)
        }
        if let dependent = stack.last { recordEdge(from: dependent, to: key) }
        let make: @Sendable () async throws -> HandOff<T> = { [self] in
            // Traced, its span is the task's current one while it runs: the runs it awaits nest in it.
            let span = runTracing?.started(dependency: key.description, scope: registration.scope,
                                           path: stack.prefix(Container.maxSpanPath).map(\.description), parent: nil)
            // Its chain: the runs it awaits end in its outermost run's trace, reported when that ends.
            let traced = isInstrumented ? AsyncResolutionTrace.begin(under: Container.asyncRun) : nil
            let start = clock.now()
            let run: @Sendable () async throws -> HandOff<T> = {
                try await Container.$asyncStack.withValue(stack + [key]) {
                    try await Container.$asyncRun.withValue(traced) { HandOff(value: try await factory()) }
                }
            }
            let made: HandOff<T>
            do {
                if let span { made = try await span.current(run) } else { made = try await run() }
            } catch {
                span?.ended(selfTime: nil, error: error)
                if let traced, traced.parent == nil { traced.trace.flush() }
                throw error
            }
            var own: UInt64?
            if let traced {
                own = recordRun(.passUnretained(registration), start: start, frame: ThreadFrame.current, countResolution: false,
                                     asyncRun: traced)
                if traced.parent == nil { traced.trace.flush() }
            }
            span?.ended(selfTime: own.map { .nanoseconds(Int64($0)) }, error: nil)
            return made
        }
        do {
            if registration.scope == .transient { return try await make().value }
            let task: Task<HandOff<T>, any Error> = registration.inflight.withLock { inflight in
                if let inflight { return inflight }
                if let existing = heldInstance(of: registration) {
                    return Task { HandOff(value: existing.value) }
                }
                let task = Task { try await make() }
                inflight = task
                return task
            }
            let made = try await task.value
            publish(made, in: registration)
            registration.inflight.withLock { if $0 == task { $0 = nil } }
            return made.value
        } catch {
            registration.inflight.withLock { $0 = nil }
            if let error = error as? ResolutionError { throw error }
            throw failed(.factoryFailed(type: key.description, underlying: error), index: registration.index)
        }
    }

    /// The instance the registration holds now, without making one.
    private func heldInstance<T>(of registration: Registration<T>) -> HandOff<T>? {
        lock.withReadLock { _ in
            if registration.scope == .weak {
                return (registration.weakInstance as? T).map(HandOff.init)
            }
            return registration.instance.map(HandOff.init)
        }
    }

    private func publish<T>(_ made: HandOff<T>, in registration: Registration<T>) {
        lock.withWriteLock {
            if registration.scope == .weak {
                registration.weakInstance = made.value as AnyObject
            } else {
                registration.instance = made.value
            }
        }
    }
}
