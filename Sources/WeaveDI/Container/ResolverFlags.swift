public import Synchronization

/// The process-wide words the inlined resolve paths (`UnifiedDI`, the property wrappers,
/// `InjectedValues`) read, in one global: code in another module reaches a global through a call to
/// its addressor, so a path that reads several makes one call instead of one for each.
@usableFromInline
struct ResolverFlags: ~Copyable, Sendable {
    /// The generation of `Container.live`, readable without its mutex: a thread compares it with the
    /// generation of the container it cached (`ThreadFrame.live`) and reads the mutex only when it moved.
    @usableFromInline let liveGeneration = Atomic<UInt64>(1)
    /// Set once a task has overridden the container (`withContainer`); until then no task has an
    /// override, and `Container.current` skips the task-local read. Never cleared: a task created in
    /// an override's scope may outlive it.
    @usableFromInline let containerOverridden = Atomic<Bool>(false)
    /// Set once a task has set `InjectedValues`; never cleared (a task created in the scope may outlive it).
    @usableFromInline let injectedValuesSet = Atomic<Bool>(false)
    /// The address of the installed `ExternalValuesBox`, 0 while none is installed.
    @usableFromInline let externalValues = Atomic<UInt>(0)

    init() {}
}

/// The resolve paths' process-wide words.
@usableFromInline let resolverFlags = ResolverFlags()
