import Synchronization

/// What memory pressure needs of a container: its `.cached` instances (reached through its lock and
/// table) and the counters it reports. The registry of live containers holds these weakly, not the
/// containers: a weak reference to an object moves all of that object's reference counting to a
/// slower side table, which every `Container.current` would then pay for.
final class EvictionTarget: Sendable {
    let lock: ShardedLock
    let table: RegistryTable
    let evictions = Atomic<UInt64>(0)
    let pressureEvents = Atomic<UInt64>(0)

    init(lock: ShardedLock, table: RegistryTable) {
        self.lock = lock
        self.table = table
    }

    /// Drops every `.cached` instance; returns how many were dropped.
    func evictCached() -> Int {
        let evicted: [Any] = lock.withWriteLock {
            table.all.filter { $0.scope == .cached }.compactMap { $0.takeInstance() }
        }
        if !evicted.isEmpty {
            evictions.add(UInt64(evicted.count), ordering: .relaxed)
            DILog.log(.all, .debug, "Evicted \(evicted.count) cached instances", metadata: ["count": "\(evicted.count)"])
        }
        return evicted.count // the instances are released here, outside the lock
    }
}
