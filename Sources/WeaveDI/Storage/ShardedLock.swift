
/// A reader-sharded lock ("big reader lock"). A reader locks only its thread's shard, so readers on
/// different threads never touch the same cache line; a writer locks every shard in order.
///
/// Each shard also owns per-key statistics that only its readers write, which makes exact counting
/// free of atomic read-modify-write contention.
@usableFromInline
final class ShardedLock: @unchecked Sendable {
    // @unchecked: `shards` is written only in init and freed in deinit; the shards themselves are Sendable.
    /// Number of shards, a power of two.
    @usableFromInline static let shardCount = 8

    /// The shards, unretained: `owned` keeps them alive, and the hot path then pays no reference counting.
    @usableFromInline let shards: UnsafeMutablePointer<Unmanaged<Shard>>
    private let owned: [Shard]

    init() {
        owned = (0..<Self.shardCount).map { _ in Shard() }
        shards = .allocate(capacity: Self.shardCount)
        for (index, shard) in owned.enumerated() {
            (shards + index).initialize(to: Unmanaged.passUnretained(shard))
        }
    }

    deinit {
        shards.deallocate()
    }

    /// Runs `body` holding the calling thread's shard; `body` may read state guarded by this lock.
    @inlinable @inline(__always)
    func withReadLock<R>(_ body: (Shard) throws -> R) rethrows -> R {
        try withReadLock(shard: ThreadFrame.current.pointee.shard, body)
    }

    /// Runs `body` holding shard `index` (the calling thread's, from `ThreadFrame`).
    @inlinable @inline(__always)
    func withReadLock<R>(shard index: Int, _ body: (Shard) throws -> R) rethrows -> R {
        try shards[index]._withUnsafeGuaranteedRef { shard in
            try shard.lock.withLock { try body(shard) }
        }
    }

    /// Runs `body` holding every shard; `body` may write state guarded by this lock.
    func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        for shard in owned { shard.lock.lock() }
        defer { for shard in owned.reversed() { shard.lock.unlock() } }
        return try body()
    }

    /// Every shard, for a writer that holds them all.
    var allShards: [Shard] { owned }
}

/// One reader shard: its lock and the statistics its readers keep.
@usableFromInline
final class Shard: @unchecked Sendable {
    // @unchecked: `counters` is read and written only while `lock` is held (by a reader of this
    // shard, or by a writer holding every shard). It sits behind a pointer so the hot path pays no
    // dynamic exclusivity check, which a stored `var` of a class would cost on every access.
    @usableFromInline let lock = SpinLock()
    @usableFromInline let counters: UnsafeMutablePointer<StatsBlock>
    /// Keeps shards on separate cache lines, so readers on different shards do not false-share.
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                          UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    init() {
        // A cache line of its own: other shards' readers write theirs.
        counters = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 128)
            .bindMemory(to: StatsBlock.self, capacity: 1)
        counters.initialize(to: StatsBlock())
    }

    deinit {
        counters.pointee.deallocate()
        counters.deinitialize(count: 1)
        UnsafeMutableRawPointer(counters).deallocate()
    }
}
