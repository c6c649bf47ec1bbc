import Logging
import Synchronization

// Dropping cached instances: on demand and under memory pressure.
extension Container {
    /// Drops every `.cached` instance; the next resolve makes a new one. Returns how many were dropped.
    @discardableResult
    public func evictCached() -> Int {
        let evicted: [Any] = lock.withWriteLock {
            table.all.filter { $0.scope == .cached }.compactMap { $0.takeInstance() }
        }
        if !evicted.isEmpty {
            evictions.add(UInt64(evicted.count), ordering: .relaxed)
            instrumentation.log(.all, .debug, "Evicted \(evicted.count) cached instances", metadata: ["count": "\(evicted.count)"])
        }
        return evicted.count // the instances are released here, outside the lock
    }

    /// What a memory-pressure watch calls (`WeaveMemoryPressure`): drops every `.cached` instance,
    /// counts the event, and tells the instrumentation's `onMemoryPressure` handlers. Returns how
    /// many instances were dropped.
    @discardableResult
    public func relieveMemoryPressure() -> Int {
        let evicted = evictCached()
        pressureEvents.add(1, ordering: .relaxed)
        instrumentation.memoryPressure()
        return evicted
    }
}
