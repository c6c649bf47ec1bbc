import WeaveSupport

/// Lets exactly one thread run a shared-scope factory while others racing on the same key wait.
/// No lock is held while the factory runs: the gate only guards the `creating` flag.
///
/// Two threads that each create a singleton whose factory needs the other's would wait for each
/// other forever. Before waiting, a thread follows the chain "gate → its creator → the gate that
/// creator waits on → …" (`CreationWaits`); when the chain comes back to itself, it does not wait
/// but reports the cycle, as a cycle on one thread is reported.
final class CreationGate: @unchecked Sendable {
    // @unchecked: `creating` is only touched between pthread_mutex_lock and pthread_mutex_unlock;
    // `creator` only with `CreationWaits.mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var creating = false
    fileprivate var creator: pthread_t?
    /// The key this gate guards, for the path of a cycle.
    let name: String

    init(name: String) {
        self.name = name
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
    /// (with no lock held), or waits for the current creator and looks again. When waiting would
    /// close a cycle of threads waiting for each other, throws `cycle(path)` instead, with the keys
    /// in the order they need each other (`A → B → A`).
    func value<T, E: Error>(existing: () -> T?, create: () throws(E) -> T, cycle: ([String]) -> E) throws(E) -> T {
        pthread_mutex_lock(mutex)
        while true {
            if let value = existing() {
                pthread_mutex_unlock(mutex)
                return value
            }
            if !creating { break }
            if let path = CreationWaits.beginWaiting(on: self) {
                pthread_mutex_unlock(mutex)
                throw cycle(path)
            }
            pthread_cond_wait(condition, mutex)
            CreationWaits.endWaiting()
        }
        creating = true
        CreationWaits.setCreator(of: self, to: pthread_self())
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            creating = false
            CreationWaits.setCreator(of: self, to: nil)
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try create()
    }
}

/// Which thread waits on which gate, process-wide: the graph a creation deadlock would be a cycle
/// in. Touched only on the slow path (a first creation, or a wait for one), never by a resolve of
/// an existing instance. Its lock is always taken after a gate's, never before.
private enum CreationWaits {
    nonisolated(unsafe) static let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()
    /// The gate each waiting thread waits on. Guarded by `mutex` (hence `nonisolated(unsafe)`).
    nonisolated(unsafe) static var waiting: [pthread_t: CreationGate] = [:]

    static func setCreator(of gate: CreationGate, to thread: pthread_t?) {
        pthread_mutex_lock(mutex)
        gate.creator = thread
        pthread_mutex_unlock(mutex)
    }

    /// Records that this thread waits on `gate`, unless that closes a cycle: then returns its path.
    static func beginWaiting(on gate: CreationGate) -> [String]? {
        let me = pthread_self()
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var names = [gate.name]
        var owner = gate.creator
        while let thread = owner {
            if pthread_equal(thread, me) != 0 { return [names.last!] + names }
            guard let next = waiting[thread], names.count <= waiting.count + 1 else { break }
            names.append(next.name)
            owner = next.creator
        }
        waiting[me] = gate
        return nil
    }

    static func endWaiting() {
        pthread_mutex_lock(mutex)
        waiting[pthread_self()] = nil
        pthread_mutex_unlock(mutex)
    }
}
