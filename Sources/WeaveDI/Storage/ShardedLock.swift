import Synchronization
import WeaveSupport

/// A reader-sharded lock ("big reader lock"). A reader locks only its thread's shard, so readers on
/// different threads never touch the same cache line; a writer locks every shard in order.
///
/// Each shard also owns per-key statistics that only its readers write, which makes exact counting
/// free of atomic read-modify-write contention.
@usableFromInline
final class ShardedLock: @unchecked Sendable {
    // @unchecked: `blocks` is written only in init and freed in deinit; each shard's counters are
    // guarded by its lock.
    /// Number of shards, a power of two.
    @usableFromInline static let shardCount = 8
    /// Bytes per shard: its lock word and its counters' header share a cache line, and no other
    /// shard's data sits on it.
    @usableFromInline static let shardBytes = 128

    /// `shardCount` blocks of `shardBytes`: the lock's two words at offset 0, the `StatsBlock` at offset 8.
    @usableFromInline let blocks: UnsafeMutableRawPointer

    init() {
        blocks = .allocate(byteCount: Self.shardCount * Self.shardBytes, alignment: Self.shardBytes)
        for index in 0..<Self.shardCount {
            let base = blocks + index * Self.shardBytes
            ParkingLock.initializeWords(at: base.bindMemory(to: Atomic<UInt32>.self, capacity: ParkingLock.wordCount))
            (base + 8).bindMemory(to: StatsBlock.self, capacity: 1).initialize(to: StatsBlock())
        }
    }

    deinit {
        for shard in allShards {
            shard.counters.pointee.deallocate()
            shard.counters.deinitialize(count: 1)
            shard.lock.deinitializeWords()
        }
        blocks.deallocate()
    }

    /// Shard `index`: a view of its block.
    @inlinable @inline(__always)
    func shard(_ index: Int) -> Shard {
        Shard(base: blocks + index &* Self.shardBytes)
    }

    /// Runs `body` holding the calling thread's shard; `body` may read state guarded by this lock.
    @inlinable @inline(__always)
    func withReadLock<R>(_ body: (Shard) throws -> R) rethrows -> R {
        try withReadLock(shard: ThreadFrame.current.pointee.shard, body)
    }

    /// Runs `body` holding shard `index` (the calling thread's, from `ThreadFrame`).
    @inlinable @inline(__always)
    func withReadLock<R>(shard index: Int, _ body: (Shard) throws -> R) rethrows -> R {
        let shard = shard(index)
        return try shard.lock.withLock { try body(shard) }
    }

    /// Runs `body` holding every shard; `body` may write state guarded by this lock.
    func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        for shard in allShards { shard.lock.lock() }
        defer { for shard in allShards.reversed() { shard.lock.unlock() } }
        return try body()
    }

    /// Every shard, for a writer that holds them all (or a reader locking each in turn).
    var allShards: [Shard] { (0..<Self.shardCount).map(shard) }
}

/// One reader shard: its lock and the statistics its readers keep, in a block `ShardedLock` owns.
@usableFromInline
struct Shard {
    @usableFromInline let base: UnsafeMutableRawPointer

    @inlinable init(base: UnsafeMutableRawPointer) {
        self.base = base
    }

    @inlinable var lock: ParkingLock {
        ParkingLock(word: base.assumingMemoryBound(to: Atomic<UInt32>.self))
    }

    /// Read and written only while `lock` is held (by a reader of this shard, or by a writer
    /// holding every shard).
    @inlinable var counters: UnsafeMutablePointer<StatsBlock> {
        (base + 8).assumingMemoryBound(to: StatsBlock.self)
    }
}
