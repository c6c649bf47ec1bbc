#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Per-thread state of the resolver: the reader shard this thread uses, and the stack of keys whose
/// factories are running on it (for cycle detection and the dependency graph). Cycles are therefore
/// detected per thread, with no global stack: two threads resolving the same type are not a cycle.
final class ThreadContext {
    /// Index of the reader shard this thread locks; threads are spread round-robin.
    let shard: Int
    /// Keys whose synchronous factories are running on this thread, outermost first.
    var stack: [RegistrationKey] = []

    private init(shard: Int) {
        self.shard = shard
    }

    private static let nextShard = Atomic<Int>(0)

    /// The calling thread's context, created on first use and freed when the thread exits.
    @inline(__always)
    static var current: ThreadContext {
        if let raw = pthread_getspecific(threadContextKey) {
            return Unmanaged<ThreadContext>.fromOpaque(raw).takeUnretainedValue()
        }
        return makeCurrent()
    }

    private static func makeCurrent() -> ThreadContext {
        let shard = nextShard.wrappingAdd(1, ordering: .relaxed).oldValue
        let context = ThreadContext(shard: shard & (ShardedLock.shardCount - 1))
        pthread_setspecific(threadContextKey, Unmanaged.passRetained(context).toOpaque())
        return context
    }
}

private let threadContextKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { raw in
        guard let raw else { return }
        Unmanaged<ThreadContext>.fromOpaque(raw).release()
    }
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
