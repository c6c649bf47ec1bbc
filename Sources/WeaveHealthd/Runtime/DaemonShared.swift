import NIOCore
import WeaveDI

/// What every runtime of one daemon shares, made once at its start and handed to each runtime a
/// reload makes (`Runtime(configuration:shared:)`): the event loops, the kept connections to
/// applications, the blocking lanes (a call of an old runtime may still be running), which user owns
/// each application name, the applications' events and lifecycle (with what the previous daemon
/// saved), the applications' watches, the heap trimmer, and the paths of the daemon's own sockets, which are not applications.
struct DaemonShared: Sendable {
    let group: any EventLoopGroup
    let connections: ConnectionPool
    let blocking: BlockingCalls
    var owners = AppOwners()
    var events = AppEventJournal(limit: .default)
    var lifecycle = AppLifecycle()
    var watches = AppWatches(capacity: 0)
    var trimmer: HeapTrimmer?
    var ownSockets: [String] = []
}

extension DaemonShared {
    /// The shared objects of a daemon starting now, with what the previous daemon left in
    /// `$STATE_DIRECTORY`: which user owns each application name, where it stopped reading each
    /// application's events, which applications were stopped with their unit enabled, and their
    /// last slow chains.
    static func atStart(configuration: DaemonConfiguration, group: any EventLoopGroup, connections: ConnectionPool,
                        watches: AppWatches, ownSockets: [String], trimmer: HeapTrimmer) -> DaemonShared {
        DaemonShared(group: group, connections: connections, blocking: BlockingCalls(),
                     owners: AppOwners(file: StateFile.inStateDirectory(AppOwners.fileName, what: AppOwners.what)),
                     events: AppEventJournal(limit: configuration.logRateLimit,
                                             file: StateFile.inStateDirectory(EventPositions.fileName, what: EventPositions.what),
                                             slowChains: AppSlowChains(file: StateFile.inStateDirectory(AppSlowChains.fileName, what: AppSlowChains.what))),
                     lifecycle: AppLifecycle(file: StateFile.inStateDirectory(AppLifecycle.fileName, what: AppLifecycle.what)),
                     watches: watches, trimmer: trimmer, ownSockets: ownSockets)
    }
}
