/// One factory run as it ended: made once, where the run ends (`Container.recordRun`), and what each
/// consumer reads: the statistics, the startup tree, the chain (a thread's `ResolutionTrace` or an
/// `AsyncResolutionTrace`), the run's span and the timing observers. Lives for that call: its
/// registrations are kept alive by the run's caller (retained, or pinned in the thread's shard).
@usableFromInline
struct FactoryRun {
    /// The registration whose factory ran.
    let registration: Unmanaged<AnyRegistration>
    /// The synchronous run it is nested in on its thread, if any.
    let parent: Unmanaged<AnyRegistration>?
    /// When it began, an `IntervalClock` reading.
    let start: UInt64
    /// Its time in all, in nanoseconds.
    let total: UInt64
    /// Its time without the runs nested in it (for an async run, the runs it awaited that ended).
    let selfTime: UInt64

    /// The dependency it made.
    var service: String {
        registration._withUnsafeGuaranteedRef { $0.key.description }
    }

    /// The run it is nested in: the synchronous one on its thread, else the async factory it ran in
    /// (`Container.asyncStack`; for an async run, the one that awaited it).
    var parentName: String? {
        parent.map { $0._withUnsafeGuaranteedRef { $0.key.description } } ?? Container.asyncStack.last?.description
    }
}
