#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Lets exactly one thread run a shared-scope factory while others racing on the same key wait.
/// No lock is held while the factory runs: the gate only guards the `creating` flag.
final class CreationGate: @unchecked Sendable {
    // @unchecked: `creating` is only touched between pthread_mutex_lock and pthread_mutex_unlock.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var creating = false

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Returns `existing()` if it finds a value; otherwise becomes the creator and runs `create`
    /// (with no lock held), or waits for the current creator and looks again.
    func value<T, E: Error>(existing: () -> T?, create: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        while true {
            if let value = existing() {
                pthread_mutex_unlock(mutex)
                return value
            }
            if !creating { break }
            pthread_cond_wait(condition, mutex)
        }
        creating = true
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            creating = false
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try create()
    }
}
