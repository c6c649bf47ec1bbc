/// Registrations taken out of a container's table (replaced, released) while a reader may still use
/// one pinned (`Shard.pins`): a transient's factory runs outside the lock on a registration it did
/// not retain. A registration was in the table from the version that inserted it
/// (`AnyRegistration.installedAt`) to the one that took it out; only a pin taken at a version in
/// between can hold it. One such pin alive, it is kept (its instance released), and looked at
/// again at the next change: a pin held forever (a factory that never returns) keeps what was in
/// the table when it was taken, at most one registration per key, and nothing retired later.
///
/// Guarded by the container's `ShardedLock`, written under all shards. A change costs the
/// registrations kept times the live pins' versions, and neither grows with the changes.
struct RetiredRegistrations {
    private var kept: [(registration: AnyRegistration, until: UInt64)] = []

    /// How many registrations wait.
    var count: Int { kept.count }

    /// Call holding every shard of `lock`, with the table's version once `removed` were taken out:
    /// keeps those of `removed` a live pin may hold, and returns what no reader can use any more, for
    /// the caller to release outside the lock, where deinits may run: the others, those kept earlier
    /// that no pin holds now, and the instances of those kept (no pinned reader reads an instance:
    /// a pinned hit has copied it already).
    mutating func retire(_ removed: [AnyRegistration], at version: UInt64, lock: ShardedLock) -> [Any] {
        let live = lock.pinnedVersions()
        func mayBeHeld(_ registration: AnyRegistration, until: UInt64) -> Bool {
            live.contains { registration.installedAt <= $0 && $0 < until }
        }
        var released: [Any] = []
        kept.removeAll { entry in
            guard !mayBeHeld(entry.registration, until: entry.until) else { return false }
            released.append(entry.registration)
            return true
        }
        for registration in removed {
            if mayBeHeld(registration, until: version) {
                kept.append((registration, version))
                if let instance = registration.takeInstance() { released.append(instance) }
            } else {
                released.append(registration)
            }
        }
        return released
    }
}
