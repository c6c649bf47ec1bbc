/// A value guarded by a pthread mutex. Used instead of `Mutex` off the hot path because
/// ThreadSanitizer intercepts pthread mutexes, while `Mutex`'s contended path on Linux (a PI futex
/// inside the runtime) hides its hand-over and makes TSan report races that are not there.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched between pthread_mutex_lock and pthread_mutex_unlock.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Guards `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
