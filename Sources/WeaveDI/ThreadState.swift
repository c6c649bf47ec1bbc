#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Two small facts per thread, packed in one pthread key so the hot path reads them with one call
/// and no reference counting: which reader shard the thread locks (threads are spread round-robin
/// on first use), and how many synchronous factories are running on it.
@usableFromInline
struct ThreadState {
    @usableFromInline let bits: Int

    @inlinable init(bits: Int) { self.bits = bits }

    /// The reader shard index.
    @inlinable var shard: Int { (bits & 0xFF) &- 1 }
    /// Whether a factory is running on this thread (resolves then record dependency edges).
    @inlinable var insideFactory: Bool { bits >> 8 != 0 }

    @inlinable
    static var current: ThreadState {
        if let raw = pthread_getspecific(threadStateKey) {
            return ThreadState(bits: Int(bitPattern: raw))
        }
        return assign()
    }

    private static let nextShard = Atomic<Int>(0)

    @usableFromInline
    static func assign() -> ThreadState {
        let shard = nextShard.wrappingAdd(1, ordering: .relaxed).oldValue & (ShardedLock.shardCount - 1)
        let state = ThreadState(bits: shard + 1)
        state.store()
        return state
    }

    /// Adds `delta` to the factory depth of the calling thread.
    @usableFromInline
    static func adjustFactoryDepth(by delta: Int) {
        ThreadState(bits: current.bits &+ delta << 8).store()
    }

    private func store() {
        pthread_setspecific(threadStateKey, UnsafeRawPointer(bitPattern: bits))
    }
}

@usableFromInline
let threadStateKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
