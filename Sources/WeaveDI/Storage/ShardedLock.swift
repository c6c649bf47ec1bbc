public import Synchronization
import WeaveSupport

/// A reader-sharded lock ("big reader lock"). A reader locks only its thread's shard, so readers on
/// different threads never touch the same cache line; a writer locks every shard in order.
///
/// Each shard also owns per-key statistics that only its readers write, which makes exact counting
/// free of atomic read-modify-write contention, and the table versions its readers pinned
/// registrations at (`Shard.pins`): used outside the lock without a reference count (see
/// `RetiredRegistrations`).
@usableFromInline
final class ShardedLock: @unchecked Sendable {
    // @unchecked: `blocks` is written only in init and freed in deinit; each shard's counters and
    // pins are guarded by its lock.
    /// Number of shards, a power of two: twice the processors (at least 16, at most 128), so that
    /// every thread of a server's pools has a shard of its own (`ShardSlots`). Fixed at first use.
    static let shardCount: Int = {
        let processors = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        var count = 16
        while count < 2 * processors && count < 128 { count *= 2 }
        return count
    }()
    /// Bytes per shard: its lock word, its counters' header and its pins share a cache line, and no
    /// other shard's data sits on it.
    @usableFromInline static let shardBytes = 128

    /// `shardCount` blocks of `shardBytes`: the lock's two words at offset 0, the `StatsBlock` at
    /// offset 8, the pins at `Shard.pinsOffset`.
    @usableFromInline let blocks: UnsafeMutableRawPointer

    init() {
        precondition(8 + MemoryLayout<StatsBlock>.size <= Shard.pinsOffset && Shard.pinsOffset + MemoryLayout<Pins>.size <= Self.shardBytes)
        blocks = .allocate(byteCount: Self.shardCount * Self.shardBytes, alignment: Self.shardBytes)
        for index in 0..<Self.shardCount {
            let base = blocks + index * Self.shardBytes
            ParkingLock.initializeWords(at: base.bindMemory(to: Atomic<UInt32>.self, capacity: ParkingLock.wordCount))
            (base + 8).bindMemory(to: StatsBlock.self, capacity: 1).initialize(to: StatsBlock())
            (base + Shard.pinsOffset).bindMemory(to: Pins.self, capacity: 1).initialize(to: Pins())
        }
    }

    deinit {
        for shard in allShards {
            shard.counters.pointee.deallocate()
            shard.counters.deinitialize(count: 1)
            shard.pins.pointee.deallocate()
            shard.pins.deinitialize(count: 1)
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

    /// The table versions of every live pin, sorted, without repeats. Call holding every shard.
    func pinnedVersions() -> [UInt64] {
        var versions: [UInt64] = []
        for shard in allShards { shard.pins.pointee.forEachVersion { versions.append($0) } }
        return versions.isEmpty ? versions : Array(Set(versions)).sorted()
    }
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

    /// Where `pins` sits in the block: after the lock's words and the `StatsBlock`.
    @usableFromInline static let pinsOffset = 32

    /// The registrations this shard's readers use unretained outside the lock. Guarded like `counters`.
    @inlinable var pins: UnsafeMutablePointer<Pins> {
        (base + Self.pinsOffset).assumingMemoryBound(to: Pins.self)
    }
}

/// The registrations a shard's readers hold pinned, as the table versions (`RegistryTable.version`)
/// they were read at: a pin at version v holds what was in the table at v, and nothing inserted
/// after it. A multiset: up to four versions on the shard's own line (one, nearly always: its
/// thread's nested pins between two changes), the rest beside it (five versions live on one shard
/// at once). Each unpin names the version of its pin (`ThreadFrame.popPin`).
@usableFromInline
struct Pins {
    @usableFromInline var versions: InlineArray<4, UInt64> = .init(repeating: 0)
    @usableFromInline var counts: InlineArray<4, UInt32> = .init(repeating: 0)
    /// The versions that did not fit, with their counts; allocated by the first.
    @usableFromInline var more: UnsafeMutablePointer<[UInt64: Int]>?

    @inlinable @inline(__always)
    mutating func pin(at version: UInt64) {
        if counts[0] == 0 || versions[0] == version {
            versions[0] = version
            counts[0] &+= 1
        } else {
            pinElsewhere(at: version)
        }
    }

    @inlinable @inline(__always)
    mutating func unpin(at version: UInt64) {
        if counts[0] != 0 && versions[0] == version {
            counts[0] &-= 1
        } else {
            unpinElsewhere(at: version)
        }
    }

    @usableFromInline
    mutating func pinElsewhere(at version: UInt64) {
        for index in 1..<4 where counts[index] != 0 && versions[index] == version {
            counts[index] &+= 1
            return
        }
        for index in 1..<4 where counts[index] == 0 {
            versions[index] = version
            counts[index] = 1
            return
        }
        if more == nil {
            more = .allocate(capacity: 1)
            more.unsafelyUnwrapped.initialize(to: [:])
        }
        more.unsafelyUnwrapped.pointee[version, default: 0] += 1
    }

    @usableFromInline
    mutating func unpinElsewhere(at version: UInt64) {
        for index in 1..<4 where counts[index] != 0 && versions[index] == version {
            counts[index] &-= 1
            return
        }
        guard let count = more?.pointee[version] else { preconditionFailure("WeaveDI: an unpin without its pin") }
        more.unsafelyUnwrapped.pointee[version] = count > 1 ? count - 1 : nil
    }

    /// Calls `body` with the version of each live pin (a version once or more).
    func forEachVersion(_ body: (UInt64) -> Void) {
        for index in 0..<4 where counts[index] != 0 { body(versions[index]) }
        more?.pointee.keys.forEach(body)
    }

    /// Frees what `more` allocated.
    mutating func deallocate() {
        more?.deinitialize(count: 1)
        more?.deallocate()
        more = nil
    }
}
