import Logging
public import Synchronization
import WeaveSupport

/// A dependency-injection container: register factories under types (and optional names), then
/// resolve them. Every method is thread-safe. No lock is held while a factory runs, so a factory
/// may resolve and register, and a slow factory for one key never blocks resolves of other keys.
///
/// `WeaveDI.Container` names this class; `DIContainer` is an alias for it.
public final class Container: @unchecked Sendable {
    // @unchecked: `table`'s contents, `nextIndex` and `retired` are guarded by `lock` (read under one
    // shard, written under all); everything else is immutable or guarded by its own lock.

    /// The container this one falls back to for keys it does not hold. It does not retain this one.
    public let parent: Container?

    @usableFromInline let lock = ShardedLock()
    @usableFromInline let table = RegistryTable()
    var nextIndex = 0
    /// Registrations out of the table that a reader may still use pinned.
    var retired = RetiredRegistrations()
    let edges = Locked<Set<DependencyEdge>>([])
    /// Names this container's edge set in the threads' `EdgeMemo`s; a new one when `releaseAll`
    /// empties the set.
    @usableFromInline let edgeEpoch = Atomic<UInt64>(Serials.next())
    /// `statistics()`'s name order of `table.all` at a table version: sorting the names is a
    /// quarter of a snapshot, and they change only when registrations do.
    let snapshotOrder = Locked<(version: UInt64, order: [Int])?>(nil)
    /// Errors of keys that are not registered, by key and kind (no registration index to count them under).
    let unregisteredErrors = Locked<[String: UInt64]>([:])
    /// Receive every timed resolve (service, whether a factory ran, nanoseconds); see `MetricsBridge`.
    package let timingObservers = Locked<[ObjectIdentifier: @Sendable (String, Bool, UInt64) -> Void]>([:])
    package let hasTimingObservers = Atomic<Bool>(false)
    /// `.cached` instances dropped by `evictCached()`, and memory-pressure events relieved.
    let evictions = Atomic<UInt64>(0)
    let pressureEvents = Atomic<UInt64>(0)
    /// The names of the `FeatureModule`s configured in this container (`ModuleManager`).
    let configuredModules = Locked<Set<String>>([])
    /// Where this container's logs and hook events go.
    public let instrumentation: Instrumentation

    /// Whether resolves are timed (factory runs always, cached hits one in `hitSamplingInterval`)
    /// and slow resolutions reported. Counts are kept either way.
    public let isInstrumented: Bool
    /// The clock timed resolves read, kept here so the hot path need not check it was calibrated.
    @usableFromInline let clock: IntervalClock.Calibration
    /// `instrumentationSettings.slowResolutionThreshold` in nanoseconds, read on every timed resolve.
    @usableFromInline let slowThresholdNanos: Atomic<UInt64>
    /// This container's log rate limit for slow-resolution and resolution-error records.
    let logThrottle: LogThrottle
    /// The first factory runs of its dependencies until startup ends (`endStartup()`).
    @usableFromInline let startup = StartupRecorder()
    /// What makes its factory runs spans (`traceFactoryRuns(with:)`): a retained `FactoryRunTracer`,
    /// set once and released with the container. (Not an `AtomicLazyReference`: its `load()` is not
    /// specialized, and cost every factory run generic metadata look-ups.)
    @usableFromInline let runTracer = Atomic<UnsafeRawPointer?>(nil)

    /// One cached hit in this many, per thread, is timed for the hit-latency histogram: timing every
    /// hit would cost more than the hit itself.
    public static let hitSamplingInterval = 64

    /// Creates a container, optionally falling back to `parent` for keys it does not hold.
    /// `instrumented: false` skips the timings (for comparison; counts are still kept).
    /// `instrumentation`: where logs and hook events go; by default the parent's, or a new one.
    public init(parent: Container? = nil, instrumented: Bool = true, settings: InstrumentationSettings = .default,
                instrumentation: Instrumentation? = nil) {
        self.parent = parent
        self.isInstrumented = instrumented
        self.instrumentation = instrumentation ?? parent?.instrumentation ?? Instrumentation()
        slowThresholdNanos = Atomic(settings.slowResolutionThreshold.nonNegativeNanoseconds)
        logThrottle = LogThrottle(limit: settings.logRateLimit)
        // The clock's calibration (2 ms, once per process) is paid here rather than in a first resolve.
        clock = IntervalClock.calibration
    }

    deinit {
        if let tracer = runTracer.load(ordering: .acquiring) { Unmanaged<FactoryRunTracer>.fromOpaque(tracer).release() }
    }

    /// This container's threshold and log rate limit; setting them applies from the next resolve.
    public var instrumentationSettings: InstrumentationSettings {
        get {
            InstrumentationSettings(slowResolutionThreshold: .nanoseconds(Int64(slowThresholdNanos.load(ordering: .relaxed))),
                                    logRateLimit: logThrottle.limit)
        }
        set {
            slowThresholdNanos.store(newValue.slowResolutionThreshold.nonNegativeNanoseconds, ordering: .relaxed)
            logThrottle.limit = newValue.logRateLimit
        }
    }

    // MARK: Resolution

    /// The service registered for `type`, or `nil` when it is not registered or its factory failed.
    @inlinable @inline(__always)
    public func resolve<T>(_ type: T.Type = T.self) -> T? {
        do { return try resolveFast(type, name: nil) } catch { report(error); return nil }
    }

    /// The service registered for `type` under `name`, or `nil`.
    @inlinable @inline(__always)
    public func resolve<T>(_ name: String, _ type: T.Type = T.self) -> T? {
        do { return try resolveFast(type, name: name) } catch { report(error); return nil }
    }

    /// The service registered for `type`, or `defaultValue()` when there is none.
    @inlinable
    public func resolve<T>(_ type: T.Type = T.self, default defaultValue: @autoclosure () -> T) -> T {
        resolve(type) ?? defaultValue()
    }

    /// The service registered for `type`; traps with a diagnostic naming the type (and near names) otherwise.
    @inlinable @inline(__always)
    public func requireResolve<T>(_ type: T.Type = T.self) -> T {
        do { return try resolveFast(type, name: nil) } catch { Self.requireFailed(error) }
    }

    /// The service registered for `type`, or `nil`; unlike `resolve`, a key registered nowhere in
    /// the chain is neither counted nor logged (other errors are reported as `resolve` reports them).
    @inlinable
    func resolveQuietly<T>(_ type: T.Type) -> T? {
        do throws(ResolutionError) {
            return try resolveFast(type, name: nil, quietMiss: true)
        } catch { // only from the slow paths, which throw `Container.quietMiss` for a miss
            if case .notRegistered(let name, _) = error, name.isEmpty { return nil } // `Container.quietMiss`
            report(error)
            return nil
        }
    }

    /// What a resolve with `quietMiss` throws for a key registered nowhere in the chain: not counted,
    /// not logged, and no near names computed.
    @usableFromInline static let quietMiss = ResolutionError.notRegistered(type: "", suggestions: [])

    /// The service registered for `type`, or a `ResolutionError` saying why not.
    @inlinable @inline(__always)
    public func resolveThrows<T>(_ type: T.Type = T.self) throws(ResolutionError) -> T {
        try resolveFast(type, name: nil)
    }

    /// The service registered for `type` under `name`, or a `ResolutionError` saying why not.
    @inlinable @inline(__always)
    public func resolveThrows<T>(_ name: String, _ type: T.Type = T.self) throws(ResolutionError) -> T {
        try resolveFast(type, name: name)
    }

    /// The service made by the argument factory of `type`, or `nil` (argument of the wrong type included).
    @inlinable
    public func resolve<T, Arg>(_ type: T.Type = T.self, argument: Arg) -> T? {
        let thread = ThreadFrame.current
        let id = ObjectIdentifier(type)
        let found = lock.withReadLock(shard: thread.pointee.shard) { shard -> Unmanaged<AnyRegistration>? in
            guard let slot = table.unnamed.pointee.lookup(id),
                  slot._withUnsafeGuaranteedRef({ registration in
                      // Safe: every registration under the identity of `T` is a `Registration<T>`.
                      unsafeDowncast(registration, to: Registration<T>.self).argumentFactory?.argumentType == ObjectIdentifier(Arg.self)
                  }) else { return nil }
            // Pinned, as a transient's (`runPinned`); counted with its timing.
            shard.pins.pointee.pin(slot)
            return slot
        }
        do {
            guard let slot = found else {
                return try resolveValue(type, argument: argument) // misses and mismatches: counted and reported there
            }
            return try runPinned(slot, as: type, frame: thread) { registration in
                // Safe: its argument type was checked under the lock, and it makes what `T` is registered under.
                unsafeDowncast(registration.argumentFactory.unsafelyUnwrapped, to: ArgumentFactory<Arg, T>.self).make(argument)
            }
        } catch {
            report(error)
            return nil
        }
    }

    /// Every synchronous resolve by key. Inlined into the caller and specialized: one shard lock,
    /// one probe, no reference counting but the returned instance's; a transient's registration is
    /// pinned in the thread's shard rather than retained (`runPinned`). Shared instances not made
    /// yet, parents, errors and resolves inside a factory (which record a dependency edge) take
    /// `resolveValue`.
    @inlinable @inline(__always)
    func resolveFast<T>(_ type: T.Type, name: String?) throws(ResolutionError) -> T {
        // Never nil: only a quiet resolve returns nil.
        try resolveFast(type, name: name, quietMiss: false).unsafelyUnwrapped
    }

    /// `resolveFast`, returning nil for a key this container (without a parent) does not hold when
    /// `quietMiss`: such a miss costs no more than a hit (an `InjectedValues` read of a key whose
    /// value type no container registers), with no error made, counted or logged.
    @inlinable @inline(__always)
    func resolveFast<T>(_ type: T.Type, name: String?, quietMiss: Bool) throws(ResolutionError) -> T? {
        let thread = ThreadFrame.current
        if isInstrumented && thread.pointee.sampleHit() { return try resolveSampled(type, name: name, quietMiss: quietMiss) }
        return try resolved(fastLookup(type, name: name, frame: thread, timed: false), type, name: name, quietMiss: quietMiss, frame: thread)
    }

    /// A resolve with its duration measured, for the sampled cached-hit histogram (one hit in
    /// `hitSamplingInterval` on each thread). Out of line but inlinable, so it is specialized where
    /// `resolveFast` is, and the fast path's code stays small.
    @inlinable @inline(never)
    func resolveSampled<T>(_ type: T.Type, name: String?, quietMiss: Bool) throws(ResolutionError) -> T? {
        let start = clock.now()
        let frame = ThreadFrame.current
        let found = fastLookup(type, name: name, frame: frame, timed: true)
        if case .pinnedInstance(let instance, let slot) = found {
            recordHit(slot, start: start, frame: frame)
            return instance
        }
        return try resolved(found, type, name: name, quietMiss: quietMiss, frame: frame)
    }

    /// The rest of a resolve after `fastLookup`.
    @inlinable @inline(__always)
    func resolved<T>(_ found: FastLookup<T>, _ type: T.Type, name: String?, quietMiss: Bool,
                     frame thread: UnsafeMutablePointer<ThreadFrame>) throws(ResolutionError) -> T? {
        switch found {
        case .instance(let instance):
            return instance
        case .pinnedInstance:
            preconditionFailure("resolveSampled records a timed hit")
        case .transient(let slot):
            return try runPinned(slot, as: type, frame: thread)
        case .miss:
            if quietMiss && parent == nil { return nil }
            return try resolveValue(type, name: name, counted: false, quietMiss: quietMiss)
        case .countedHit:
            return try resolveValue(type, name: name, counted: true)
        case .other:
            return try resolveValue(type, name: name, counted: false)
        }
    }

    /// The look-up of `resolveFast`, under the thread's shard lock: one probe, and no reference
    /// counting but the returned instance's. A transient's registration is pinned in the shard
    /// for its factory run (`runPinned`), as is a `timed` hit's until its time is recorded.
    @inlinable @inline(__always)
    func fastLookup<T>(_ type: T.Type, name: String?, frame: UnsafeMutablePointer<ThreadFrame>, timed: Bool) -> FastLookup<T> {
        let id = ObjectIdentifier(type)
        let hash = KeyHash.of(id, name: name)
        return lock.withReadLock(shard: frame.pointee.shard) { shard -> FastLookup<T> in
            guard let slot = table.slot(id, name: name, hash: hash) else { return .miss }
            // The registration is not retained: its reference count would be one more cache line
            // that every thread resolving the key writes.
            return slot._withUnsafeGuaranteedRef { registration in
                // Safe: every registration under the identity of `T` is a `Registration<T>`.
                let typed = unsafeDowncast(registration, to: Registration<T>.self)
                if typed.scope == .transient, case .sync = typed.maker {
                    // Counted with its timing, once its factory has run.
                    shard.pins.pointee.pin(slot)
                    return .transient(slot)
                }
                // A held instance is a resolve that succeeds: counted now. Any other is counted once
                // it has succeeded: a failed attempt is an error, not a resolve.
                guard let instance = typed.instanceSlot.pointee else { return .other }
                shard.counters.pointee.countHit(registration.index)
                // Inside a factory, the dependency edge: nothing to do if this thread recorded it lately.
                if frame.pointee.insideFactory,
                   !frame.pointee.knows(frame.pointee.edge(epoch: edgeEpoch.load(ordering: .relaxed), to: registration.serial)) {
                    return .countedHit
                }
                if timed {
                    shard.pins.pointee.pin(slot)
                    return .pinnedInstance(instance, slot)
                }
                return .instance(instance)
            }
        }
    }

    /// What the inlined fast path found.
    @usableFromInline
    enum FastLookup<T> {
        case instance(T)
        /// A held instance, counted, with a dependency edge to record (`resolveValue`).
        case countedHit
        /// A held instance (counted) whose registration is pinned in the thread's shard, not
        /// retained: a timed hit, whose time `resolveSampled` records.
        case pinnedInstance(T, Unmanaged<AnyRegistration>)
        /// The registration, pinned in the thread's shard (not retained).
        case transient(Unmanaged<AnyRegistration>)
        case other
        case miss
    }

    /// Runs the synchronous factory of a transient registration that the fast path pinned (or, with
    /// `make`, its argument factory), as `run` does, and unpins it once the run is counted. The
    /// registration is only reached through guaranteed references, and its factory called in place:
    /// neither its reference count nor the factory's context's is written.
    @inlinable
    func runPinned<T>(_ slot: Unmanaged<AnyRegistration>, as _: T.Type, frame: UnsafeMutablePointer<ThreadFrame>,
                      _ make: (Registration<T>) -> T = { $0.synchronousFactory() }) throws(ResolutionError) -> T {
        if frame.pointee.insideFactory {
            let entered = slot._withUnsafeGuaranteedRef { registration in
                Result { () throws(ResolutionError) in try enterNested(registration, frame: frame) }
            }
            if case .failure(let error) = entered {
                unpin(slot, frame)
                throw error
            }
        }
        frame.pointee.push(slot)
        defer { frame.pointee.pop() }
        var traced = false
        if let tracer = runTracer.load(ordering: .acquiring) { traced = slot._withUnsafeGuaranteedRef { startSpan(tracer, $0, frame: frame) } }
        let start = isInstrumented ? clock.now() : 0
        // Safe: every registration under the identity of `T` is a `Registration<T>`.
        let made = slot._withUnsafeGuaranteedRef { make(unsafeDowncast($0, to: Registration<T>.self)) }
        var own: UInt64?
        if isInstrumented {
            own = recordRun(slot, start: start, frame: frame, countResolution: true, pinned: true)
        } else {
            // The index is read here, not once before the branches: read before, it cost the
            // transient 16 instructions (`Benchmarks/path_instructions.sh`, 770.8 against 754.8).
            countResolution(slot._withUnsafeGuaranteedRef { $0.index }, unpinning: slot, frame: frame)
        }
        if traced { endSpan(own: own, error: nil, frame: frame) }
        return made
    }

    /// `requireResolve`'s trap, out of line.
    @usableFromInline
    static func requireFailed(_ error: ResolutionError) -> Never {
        preconditionFailure("WeaveDI: \(error)")
    }

    // MARK: Internals

    /// The outcome of a look-up under the read lock. An instance comes with its registration's index
    /// and, inside a factory when this thread has not recorded that dependency edge lately, the
    /// registration; otherwise not: its reference count would be a line every thread resolving
    /// the key writes.
    @usableFromInline
    enum Lookup<T> {
        case instance(T, index: Int, newEdge: AnyRegistration?)
        case registration(Registration<T>)
        case missing
    }

    /// `edgeEpoch`: that of the container that records the edge (the one asked, perhaps a child).
    @inlinable
    func lookup<T>(_ type: T.Type, name: String?, count: Bool = true, edgeEpoch: UInt64) -> Lookup<T> {
        let id = ObjectIdentifier(type)
        let hash = KeyHash.of(id, name: name)
        let frame = ThreadFrame.current
        return lock.withReadLock(shard: frame.pointee.shard) { shard in
            guard let slot = table.slot(id, name: name, hash: hash) else { return .missing }
            return slot._withUnsafeGuaranteedRef { found in
                // Safe: every registration under the identity of `T` is a `Registration<T>`.
                let registration = unsafeDowncast(found, to: Registration<T>.self)
                if let instance = registration.instance {
                    if count { shard.counters.pointee.countHit(found.index) }
                    let newEdge = frame.pointee.insideFactory
                        && !frame.pointee.knows(frame.pointee.edge(epoch: edgeEpoch, to: found.serial))
                    return .instance(instance, index: found.index, newEdge: newEdge ? found : nil)
                }
                // Counted by the caller once its factory has succeeded (`succeeded`).
                return .registration(registration)
            }
        }
    }

    /// The registration for `type` here or in an ancestor, with the container that holds it.
    /// `counted`: the caller already counted this container's hit (the inlined fast path did).
    /// `quietMiss`: a key registered nowhere in the chain throws `Container.quietMiss`, uncounted.
    func find<T>(_ type: T.Type, name: String?, counted: Bool = false, quietMiss: Bool = false) throws(ResolutionError) -> (Container, Lookup<T>) {
        var container = self
        var count = !counted
        let epoch = edgeEpoch.load(ordering: .relaxed)
        while true {
            let found = container.lookup(type, name: name, count: count, edgeEpoch: epoch)
            count = true
            if case .missing = found {
                guard let parent = container.parent else {
                    if quietMiss { throw Container.quietMiss }
                    throw failed(notRegistered(RegistrationKey(type, name: name)), index: nil)
                }
                container = parent
                continue
            }
            return (container, found)
        }
    }

    /// The rest of a resolve by key: factories, parents, errors, dependency edges.
    @usableFromInline @inline(never)
    func resolveValue<T>(_ type: T.Type, name: String?, counted: Bool = false, quietMiss: Bool = false) throws(ResolutionError) -> T {
        let (owner, found) = try find(type, name: name, counted: counted, quietMiss: quietMiss)
        switch found {
        case .instance(let instance, _, let newEdge):
            if let newEdge { recordEdge(to: newEdge, frame: ThreadFrame.current) }
            return instance
        case .registration(let registration):
            let made = try owner.produce(registration)
            succeeded(registration, in: owner, counted: counted)
            return made
        case .missing:
            preconditionFailure("find never returns .missing")
        }
    }

    /// Counts a resolve whose registration had no instance at look-up, now that it has succeeded:
    /// in `owner`, unless `owner` is this container and the caller counted it already.
    func succeeded(_ registration: AnyRegistration, in owner: Container, counted: Bool) {
        if owner !== self || !counted { owner.countResolution(registration.index) }
    }

    @usableFromInline
    func resolveValue<T, Arg>(_ type: T.Type, argument: Arg) throws(ResolutionError) -> T {
        let (_, found) = try find(type, name: nil)
        guard case .registration(let registration) = found,
              case .argument(let factory, let expected) = registration.maker else {
            let index: Int? = switch found {
            case .instance(_, let index, _): index
            case .registration(let registration): registration.index
            case .missing: nil
            }
            throw failed(.argumentMismatch(type: String(describing: type), expected: "no argument",
                                           actual: "an argument of type \(Arg.self)"), index: index)
        }
        guard let typed = factory.taking(Arg.self, making: T.self) else {
            throw failed(.argumentMismatch(type: registration.key.description, expected: "an argument of type \(expected)",
                                           actual: "an argument of type \(Arg.self)"), index: registration.index)
        }
        return try run(registration, counted: false) { typed.make(argument) }
    }

    /// Runs the registration's synchronous factory as its scope requires.
    func produce<T>(_ registration: Registration<T>) throws(ResolutionError) -> T {
        let key = registration.key
        let make: @Sendable () throws -> T
        switch registration.maker {
        case .sync(let factory):
            make = factory
        case .throwing(let factory):
            make = factory
        case .async:
            throw failed(.factoryFailed(type: key.description, underlying: RegistrationUsageError.asyncFactoryNeedsAwait(type: key.description)),
                         index: registration.index)
        case .argument(_, let argumentType):
            throw failed(.argumentMismatch(type: key.description, expected: "an argument of type \(argumentType)", actual: "no argument"),
                         index: registration.index)
        case .instance:
            // An instance registration whose instance is gone: it was released; nothing can remake it.
            throw failed(notRegistered(key), index: registration.index)
        }
        switch registration.scope {
        case .transient:
            return try run(registration, make)
        case .singleton, .cached:
            // Checked before the gate: a factory that resolves its own key must not wait on itself.
            try checkCycle(registration)
            return try registration.gate!.value(
                existing: { lock.withReadLock { _ in registration.instance } },
                create: { () throws(ResolutionError) -> T in
                    let instance = try run(registration, make)
                    lock.withWriteLock { registration.instance = instance }
                    return instance
                },
                cycle: { path in failed(.cycle(path: path), index: registration.index) })
        case .weak:
            try checkCycle(registration)
            return try registration.gate!.value(
                existing: { lock.withReadLock { _ in registration.weakInstance as? T } },
                create: { () throws(ResolutionError) -> T in
                    let instance = try run(registration, make)
                    guard Swift.type(of: instance as Any) is AnyClass else {
                        throw failed(.factoryFailed(type: key.description, underlying: RegistrationUsageError.weakScopeNeedsClass(type: key.description)),
                                     index: registration.index)
                    }
                    lock.withWriteLock { registration.weakInstance = instance as AnyObject }
                    return instance
                },
                cycle: { path in failed(.cycle(path: path), index: registration.index) })
        }
    }

    /// Runs a factory with cycle detection and dependency-edge recording on this thread's stack.
    /// Generic over the factory's error, so a non-throwing factory (`Never`) pays for no catch.
    /// `counted: false`: the resolve is not counted yet; it is counted with the factory's timing.
    @inlinable
    func run<T, Failure: Error>(
        _ registration: AnyRegistration, frame: UnsafeMutablePointer<ThreadFrame> = ThreadFrame.current,
        counted: Bool = true, _ make: () throws(Failure) -> T
    ) throws(ResolutionError) -> T {
        if frame.pointee.insideFactory { try enterNested(registration, frame: frame) }
        frame.pointee.push(registration) // `registration` is alive for the whole call
        defer { frame.pointee.pop() }
        var traced = false
        if let tracer = runTracer.load(ordering: .acquiring) { traced = startSpan(tracer, registration, frame: frame) }
        let start = isInstrumented ? clock.now() : 0
        let made: T
        do {
            made = try make()
        } catch {
            if traced { endSpan(own: nil, error: error, frame: frame) }
            if let error = error as? ResolutionError { throw error }
            throw failed(.factoryFailed(type: registration.key.description, underlying: error), index: registration.index)
        }
        var own: UInt64?
        if isInstrumented {
            own = recordRun(.passUnretained(registration), start: start, frame: frame, countResolution: !counted)
        } else if !counted {
            countResolution(registration.index, frame: frame)
        }
        if traced { endSpan(own: own, error: nil, frame: frame) }
        return made
    }

    /// A factory run inside another's: throws `.cycle` when `registration`'s key is already being
    /// made on this thread, and records the dependency edge from the factory running innermost.
    @usableFromInline
    func enterNested(_ registration: AnyRegistration, frame: UnsafeMutablePointer<ThreadFrame>) throws(ResolutionError) {
        try checkCycle(registration, frame: frame)
        recordEdge(to: registration, frame: frame)
    }

    /// Throws `.cycle` when `registration`'s key is already being made on this thread.
    @inlinable
    func checkCycle(
        _ registration: AnyRegistration, frame: UnsafeMutablePointer<ThreadFrame> = ThreadFrame.current
    ) throws(ResolutionError) {
        guard frame.pointee.contains(registration) else { return }
        do {
            try checkCycle(registration.key, stack: frame.pointee.registrations.map(\.key))
        } catch {
            throw failed(error, index: registration.index)
        }
    }

    /// Throws `.cycle` when `key` is already being made further up `stack`.
    @usableFromInline
    func checkCycle(_ key: RegistrationKey, stack: [RegistrationKey]) throws(ResolutionError) {
        if let start = stack.firstIndex(of: key) {
            throw .cycle(path: stack[start...].map(\.description) + [key.description])
        }
    }

    /// Records the edge from the factory running innermost on this thread to `dependency`, unless
    /// the thread recorded it lately (`EdgeMemo`).
    @usableFromInline
    func recordEdge(to dependency: AnyRegistration, frame: UnsafeMutablePointer<ThreadFrame>) {
        let edge = frame.pointee.edge(epoch: edgeEpoch.load(ordering: .relaxed), to: dependency.serial)
        guard !frame.pointee.knows(edge) else { return }
        recordEdge(from: frame.pointee.innermost.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.key }, to: dependency.key)
        frame.pointee.remember(edge)
    }

    func recordEdge(from dependent: RegistrationKey, to dependency: RegistrationKey) {
        _ = edges.withLock { $0.insert(DependencyEdge(from: dependent, to: dependency)) }
    }

    /// A `.notRegistered` error for `key`, with near names registered here or in an ancestor.
    func notRegistered(_ key: RegistrationKey) -> ResolutionError {
        var names: [String] = []
        var container: Container? = self
        while let current = container {
            names += current.lock.withReadLock { _ in current.table.all.map(\.key.description) }
            container = current.parent
        }
        return .notRegistered(type: key.description, suggestions: NameSuggestions.nearest(to: key.description, among: names))
    }

    /// Logs a miss that an optional API turned into `nil`, at warning level (optional APIs are often
    /// used for optional services), and tells the error hooks. The other kinds were logged, at error
    /// level, and reported where they arose (`failed`), whichever API asked.
    @usableFromInline
    func report(_ error: ResolutionError) {
        guard case .notRegistered = error else { return }
        instrumentation.error(service: error.serviceName, error: error, throttle: nil)
        instrumentation.throttled(.resolutionError, service: error.serviceName, .warnings, .warning, "\(error)",
                                  metadata: ["dependency": "\(error.serviceName)", "error_kind": "\(error.kind.rawValue)"],
                                  throttle: logThrottle)
    }
}

/// The container class, under the name WeaveDI code uses for it.
public typealias DIContainer = Container
