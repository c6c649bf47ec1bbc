/// Registrations taken out of a container's table (replaced, released) while a reader may still use
/// one pinned (`Shard.pins`): a transient's factory runs outside the lock on a registration it did
/// not retain. The pins name the registrations they hold (their addresses), so one pinned nowhere is
/// released at once, and one pinned is kept (its instance released) and looked at again at the
/// next change. A pin held forever (a factory that never returns) keeps its own registration and
/// nothing else: later changes cost the same as before it.
///
/// Guarded by the container's `ShardedLock`, written under all shards. A change costs the shards,
/// the live pins and the registrations kept, none of which grows with the changes.
struct RetiredRegistrations {
    private var kept: [AnyRegistration] = []

    /// How many registrations wait.
    var count: Int { kept.count }

    /// Call holding every shard of `lock`: keeps those of `removed` a live pin holds, and returns
    /// what no reader can use any more, for the caller to release outside the lock, where deinits
    /// may run: the others, those kept earlier that no pin holds now, and the instances of those
    /// kept (no pinned reader reads an instance: a pinned hit has copied it already).
    mutating func retire(_ removed: [AnyRegistration], lock: ShardedLock) -> [Any] {
        guard !removed.isEmpty || !kept.isEmpty else { return [] }
        let pinned = lock.pinnedAddresses()
        func isPinned(_ registration: AnyRegistration) -> Bool {
            pinned.contains(UInt(bitPattern: Unmanaged.passUnretained(registration).toOpaque()))
        }
        var released: [Any] = []
        kept.removeAll { registration in
            guard !isPinned(registration) else { return false }
            released.append(registration)
            return true
        }
        for registration in removed {
            if isPinned(registration) {
                kept.append(registration)
                if let instance = registration.takeInstance() { released.append(instance) }
            } else {
                released.append(registration)
            }
        }
        return released
    }
}
