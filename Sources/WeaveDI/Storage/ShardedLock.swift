public import Synchronization
import WeaveSupport

/// A reader-sharded lock ("big reader lock"). A reader locks only its thread's shard, so readers on
/// different threads never touch the same cache line; a writer locks every shard in order.
///
/// Each shard also owns per-key statistics that only its readers write, which makes exact counting
/// free of atomic read-modify-write contention, and the registrations its readers have pinned
/// (`Shard.pins`): used outside the lock without a reference count (see `RetiredRegistrations`).
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
    /// How many times the write lock was taken: whatever a writer changes (a registration, a shared
    /// instance made or evicted) moves it. Readers of the fast path never touch it.
    let writes = Atomic<UInt64>(0)
    /// Fired after each write (`withWriteLock`), for whoever waits for the container to change.
    let written = ChangeSignal()

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

    /// Runs `body` holding every shard; `body` may write state guarded by this lock. `written` fires
    /// once the shards are unlocked.
    func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        defer { written.signal() }
        for shard in allShards { shard.lock.lock() }
        defer {
            writes.add(1, ordering: .releasing)
            for shard in allShards.reversed() { shard.lock.unlock() }
        }
        return try body()
    }

    /// Every shard, for a writer that holds them all (or a reader locking each in turn).
    var allShards: [Shard] { (0..<Self.shardCount).map(shard) }

    /// The addresses of the registrations pinned in any shard. Call holding every shard.
    func pinnedAddresses() -> Set<UInt> {
        var addresses: Set<UInt> = []
        for shard in allShards { shard.pins.pointee.forEachAddress { addresses.insert($0) } }
        return addresses
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

/// The registrations a shard's readers hold pinned, by address: a multiset, one on the shard's own
/// line (nearly always enough: its thread's run of one transient, or a few nested runs of the
/// same), the others beside it. A pinned registration is not freed (`RetiredRegistrations`), so
/// its address names it alone while the pin lives.
@usableFromInline
struct Pins {
    @usableFromInline var address: UInt = 0
    @usableFromInline var count = 0
    /// The other addresses, with their counts; allocated by the first.
    @usableFromInline var others: UnsafeMutablePointer<[UInt: Int]>?

    @inlinable @inline(__always)
    mutating func pin(_ registration: Unmanaged<AnyRegistration>) {
        let address = UInt(bitPattern: registration.toOpaque())
        if count == 0 {
            self.address = address
            count = 1
        } else if self.address == address {
            count &+= 1
        } else {
            pinElsewhere(address)
        }
    }

    @inlinable @inline(__always)
    mutating func unpin(_ registration: Unmanaged<AnyRegistration>) {
        let address = UInt(bitPattern: registration.toOpaque())
        if self.address == address && count != 0 {
            count &-= 1
        } else {
            unpinElsewhere(address)
        }
    }

    @usableFromInline
    mutating func pinElsewhere(_ address: UInt) {
        if others == nil {
            others = .allocate(capacity: 1)
            others.unsafelyUnwrapped.initialize(to: [:])
        }
        others.unsafelyUnwrapped.pointee[address, default: 0] += 1
    }

    @usableFromInline
    mutating func unpinElsewhere(_ address: UInt) {
        guard let count = others?.pointee[address] else { preconditionFailure("WeaveDI: an unpin without its pin") }
        others.unsafelyUnwrapped.pointee[address] = count > 1 ? count - 1 : nil
    }

    /// Calls `body` with the address of each pinned registration.
    func forEachAddress(_ body: (UInt) -> Void) {
        if count != 0 { body(address) }
        others?.pointee.keys.forEach(body)
    }

    /// Frees what `others` allocated.
    mutating func deallocate() {
        others?.deinitialize(count: 1)
        others?.deallocate()
        others = nil
    }
}
