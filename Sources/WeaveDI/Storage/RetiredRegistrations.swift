/// Registrations taken out of a container's table (replaced, released) while a reader may still use
/// one pinned (`Shard.pins`): a transient's factory runs outside the lock on a registration it did
/// not retain. Each batch waits for the shards that held pins when it was retired; once each of
/// them has held none since (its quiescence count moved, or it holds none now), no reader can
/// still hold one, and the batch is handed back to be released.
///
/// Guarded by the container's `ShardedLock`, written under all shards. Batches are looked at on every
/// change of the table, so one waits at most until the next change after its shards' factories return.
struct RetiredRegistrations {
    private var batches: [(registrations: [AnyRegistration], waits: [(shard: Int, quiescences: UInt64)])] = []

    /// How many registrations wait.
    var count: Int { batches.reduce(0) { $0 + $1.registrations.count } }

    /// Call holding every shard of `lock`: keeps `removed` while a shard holds pins, and returns what
    /// no reader can use any more, for the caller to release outside the lock, where deinits may run:
    /// the registrations of `removed` and of earlier batches that no shard holds, and the instances
    /// of those kept (no pinned reader reads an instance: a pinned hit has copied it already).
    mutating func retire(_ removed: [AnyRegistration], lock: ShardedLock) -> [Any] {
        var released: [Any] = []
        batches.removeAll { batch in
            let done = batch.waits.allSatisfy { wait in
                let pins = lock.shard(wait.shard).pins.pointee
                return pins.held == 0 || pins.quiescences != wait.quiescences
            }
            if done { released += batch.registrations as [Any] }
            return done
        }
        guard !removed.isEmpty else { return released }
        let waits = (0..<ShardedLock.shardCount).compactMap { index -> (shard: Int, quiescences: UInt64)? in
            let pins = lock.shard(index).pins.pointee
            return pins.held == 0 ? nil : (index, pins.quiescences)
        }
        if waits.isEmpty {
            released += removed as [Any]
        } else {
            batches.append((removed, waits))
            released += removed.compactMap { $0.takeInstance() }
        }
        return released
    }
}
