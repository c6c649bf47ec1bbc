import Logging
public import Synchronization
import WeaveSupport

/// `Container.live` and a generation that changes with every assignment (`resolverFlags.liveGeneration`), under one mutex.
private let liveContainer = Locked((container: Container(), generation: UInt64(1)))

extension Container {
    /// The process-wide container. Replace it, for example in tests, by assigning a new one.
    ///
    /// Each thread that resolves through `UnifiedDI` or a property wrapper keeps a reference to the
    /// live container it last used, so a replaced container is released once each of those threads
    /// has resolved again (or exited); a thread that was resolving in it releases it when that
    /// resolve returns.
    public static var live: Container {
        get { withLive { $0 } }
        set {
            let replaced = liveContainer.withLock { live in
                let replaced = live.container
                live = (newValue, live.generation &+ 1)
                resolverFlags.liveGeneration.store(live.generation, ordering: .releasing)
                return replaced
            }
            // Released here, outside the mutex: its deinit (and its instances') may resolve.
            _ = replaced
        }
    }

    /// Runs `body` with `live`, without a lock or reference counting when this thread's cached
    /// container is still the live one.
    @inlinable @inline(__always)
    static func withLive<R>(_ body: (Container) -> R) -> R {
        let frame = ThreadFrame.current
        if frame.pointee.liveGeneration != resolverFlags.liveGeneration.load(ordering: .acquiring) { refreshLive(frame) }
        frame.pointee.liveBorrows &+= 1
        defer {
            frame.pointee.liveBorrows &-= 1
            if frame.pointee.liveBorrows == 0, frame.pointee.retiredLive != nil { releaseRetired(frame) }
        }
        return frame.pointee.live.unsafelyUnwrapped._withUnsafeGuaranteedRef(body)
    }

    /// Caches the live container (retained) and its generation in the thread's frame. The one it
    /// replaces is released, or kept until this thread's outermost `withLive` returns when one is
    /// running in it (a factory or hook resolving after `live` was reassigned): the frame's
    /// reference may be its last.
    @usableFromInline @inline(never)
    static func refreshLive(_ frame: UnsafeMutablePointer<ThreadFrame>) {
        let (container, generation) = liveContainer.withLock { $0 }
        let previous = frame.pointee.live
        frame.pointee.live = .passRetained(container)
        frame.pointee.liveGeneration = generation
        guard let previous else { return }
        if frame.pointee.liveBorrows != 0 {
            frame.pointee.retiredLive = (frame.pointee.retiredLive ?? []) + [previous.takeRetainedValue()]
            return
        }
        // Last: its deinit (and its instances') may resolve, through this frame.
        previous.release()
    }

    /// Releases the live containers replaced while this thread was resolving in them.
    @usableFromInline @inline(never)
    static func releaseRetired(_ frame: UnsafeMutablePointer<ThreadFrame>) {
        let retired = frame.pointee.retiredLive.take()
        // Released here, after the frame is consistent: their deinits may resolve through it.
        _ = retired
    }

    /// The container that overrides `live` in the current task, set by `withContainer(_:operation:)`.
    @TaskLocal static var override: Container?

    /// The container property wrappers and `UnifiedDI` use: the task's override if there is one, else `live`.
    public static var current: Container {
        withCurrent { $0 }
    }

    /// Runs `body` with `current`; without a task-local read until some task has overridden the
    /// container, and without a lock or reference counting for `live` (see `withLive`).
    @inlinable @inline(__always)
    static func withCurrent<R>(_ body: (Container) -> R) -> R {
        if resolverFlags.containerOverridden.load(ordering: .relaxed) { return withOverride(body) }
        return withLive(body)
    }

    /// `withCurrent` once overrides are in use: the innermost synchronous `withContainer` scope on
    /// this thread (no task-local read, no reference counting), else the task's override, else `live`.
    @inlinable
    static func withOverride<R>(_ body: (Container) -> R) -> R {
        if let scoped = ThreadFrame.current.pointee.scopedOverride { return scoped._withUnsafeGuaranteedRef(body) }
        if let override = currentOverride() { return override._withUnsafeGuaranteedRef(body) }
        return withLive(body)
    }

    /// The task's override, not retained (`body` runs inside its scope).
    @usableFromInline
    static func currentOverride() -> Unmanaged<Container>? { $override.boundObject() }

    /// Adds the registrations `configure` makes to the current container (`live`, unless a test
    /// overrides it with `withContainer`), all at once when it returns:
    /// a resolve never sees some of them without the others, and registrations accumulate across
    /// bootstraps (a user module, an order module and feature modules may each bootstrap their own).
    /// A registration that replaces one already there is logged as a warning, never lost silently,
    /// and returned. Inside `configure`, resolves do not see its own registrations yet; if it
    /// throws, none is added.
    @discardableResult
    public static func bootstrap(_ configure: @Sendable (Container) async throws -> Void) async rethrows -> [RegistrationKey] {
        let container = current
        let staging = Staging(container: container)
        try await $staging.withValue(staging) { try await configure(container) }
        return staging.commit()
    }

    /// The registrations a `bootstrap` of `container` has made so far, added by `commit()`.
    final class Staging: Sendable {
        let container: Container
        let inserts = Locked<[(key: RegistrationKey, insert: () -> AnyRegistration?)]>([])

        init(container: Container) {
            self.container = container
        }

        /// Adds every staged registration under one hold of the write lock, then logs (and returns)
        /// the keys whose earlier registration it replaced.
        @discardableResult
        func commit() -> [RegistrationKey] {
            let staged = inserts.withLock { staged in defer { staged = [] }; return staged }
            let (replaced, released) = container.lock.withWriteLock {
                let replaced = staged.map { ($0.key, $0.insert()) }
                return (replaced, container.retireHoldingLock(replaced.compactMap(\.1)))
            }
            _ = released // released here, outside the lock, unless a reader may still use one
            for case (let key, let previous?) in replaced {
                container.instrumentation.log(.warnings, .warning,
                                              "Bootstrap replaced the registration of \(key) (was \(previous.scope)); the earlier one is gone",
                                              metadata: ["dependency": "\(key)"])
            }
            container.instrumentation.log(.registration, .info, "Added \(staged.count) registrations at once",
                                          metadata: ["registrations": "\(staged.count)", "replaced": "\(replaced.filter { $0.1 != nil }.count)"])
            return replaced.compactMap { $0.1 == nil ? nil : $0.0 }
        }
    }

    /// The bootstrap in progress in this task, if any: `register` on its container stages instead of adding.
    @TaskLocal static var staging: Staging?
}

/// Runs `operation` with `container` as `Container.current` for this task and the tasks it creates;
/// `live` is untouched, so parallel tests stay isolated.
public func withContainer<R>(
    _ container: Container, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> R
) async rethrows -> R {
    resolverFlags.containerOverridden.store(true, ordering: .relaxed)
    return try await Container.$override.withValue(container, operation: operation, isolation: isolation)
}

/// Runs `operation` with `container` as `Container.current` on this thread's task context.
///
/// The scope is also kept in the thread's frame, which `Container.current` reads before the task
/// local: a synchronous scope cannot suspend, so it runs on this thread from start to end. (Tasks
/// it creates inherit the task local.)
public func withContainer<R>(_ container: Container, operation: () throws -> R) rethrows -> R {
    resolverFlags.containerOverridden.store(true, ordering: .relaxed)
    let frame = ThreadFrame.current
    let outer = frame.pointee.scopedOverride
    frame.pointee.scopedOverride = .passUnretained(container) // `container` is alive for the whole call
    defer { frame.pointee.scopedOverride = outer }
    return try Container.$override.withValue(container, operation: operation)
}
