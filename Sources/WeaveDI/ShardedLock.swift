import Synchronization

/// A reader-sharded lock ("big reader lock"). A reader locks only its thread's shard, so readers on
/// different threads never touch the same cache line; a writer locks every shard in order.
///
/// Each shard also owns per-key counters that only its readers write, which makes exact counting
/// free of atomic read-modify-write contention.
final class ShardedLock: Sendable {
    /// Number of shards, a power of two.
    static let shardCount = 8

    let shards: [Shard]

    init() {
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// Runs `body` holding the calling thread's shard; `body` may read state guarded by this lock.
    @inline(__always)
    func withReadLock<R>(_ context: ThreadContext, _ body: (Shard) throws -> R) rethrows -> R {
        let shard = shards[context.shard]
        return try shard.lock.withLock { _ in try body(shard) }
    }

    /// Runs `body` holding every shard; `body` may write state guarded by this lock.
    func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        try lockShards(from: 0, body)
    }

    private func lockShards<R>(from index: Int, _ body: () throws -> R) rethrows -> R {
        if index == shards.count { return try body() }
        // HandOff: the result stays on this thread; Mutex only asks for `sending` in general.
        return try shards[index].lock.withLock { _ in HandOff(value: try lockShards(from: index + 1, body)) }.value
    }
}

/// One reader shard: its lock and the counters its readers keep.
final class Shard: @unchecked Sendable {
    // @unchecked: `hits` is read and written only while `lock` is held (by a reader of this shard,
    // or by a writer holding every shard).
    let lock = Mutex<Void>(())
    /// Resolve count per registration index.
    var hits: ContiguousArray<UInt64> = []
    /// Keeps shards on separate cache lines, so readers on different shards do not false-share.
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                          UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// Counts one resolve of the registration at `index`.
    @inline(__always)
    func countHit(_ index: Int) {
        if index >= hits.count {
            hits.append(contentsOf: repeatElement(0, count: index + 1 - hits.count))
        }
        hits[index] &+= 1
    }
}
