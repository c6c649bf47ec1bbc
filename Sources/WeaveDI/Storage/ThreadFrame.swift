public import CMachine
import WeaveSupport

/// The resolver's per-thread state, in one block that a C thread-local points to, so the hot path
/// reaches it with one load and no reference counting or exclusivity checks (a pthread key holds it
/// too, for its destructor at thread exit):
/// - the reader shard the thread locks: one no other live thread has while there are no more
///   threads than shards (`ShardSlots`), so resolves on different threads write different lines;
/// - the registrations whose synchronous factories are running on the thread, outermost first, for
///   cycle detection and the dependency graph. Cycles are therefore detected per thread, with no
///   global stack: two threads resolving the same type are not a cycle;
/// - for each of those runs, the time of the runs nested in it that finished (its self time is the
///   rest), the finished runs worth naming in a slow resolution's chain (`ResolutionTrace`), and
///   the runs' spans when their container traces them.
@usableFromInline
struct ThreadFrame {
    @usableFromInline let shard: Int
    /// How many factories are running on this thread.
    @usableFromInline var depth = 0
    /// Unretained: each is kept alive by the resolve that runs its factory.
    @usableFromInline var stack: UnsafeMutablePointer<Unmanaged<AnyRegistration>>
    /// Per entry of `stack`: the nanoseconds of the finished runs nested directly in it.
    @usableFromInline var childNanos: UnsafeMutablePointer<UInt64>
    @usableFromInline var capacity = 16
    /// The finished runs kept for slow resolutions' chains since the outermost began; made by the first.
    @usableFromInline var trace: ResolutionTrace?
    /// Counts down to the next cached hit that is timed.
    @usableFromInline var sampleCountdown = 1
    /// `Container.live` as this thread last read it (retained), and its generation (0: none yet).
    @usableFromInline var live: Unmanaged<Container>?
    @usableFromInline var liveGeneration: UInt64 = 0
    /// How many `withLive` bodies are running on this thread, borrowing `live`.
    @usableFromInline var liveBorrows = 0
    /// Live containers replaced in the frame while it was borrowed, released when no body is left.
    @usableFromInline var retiredLive: [Container]?
    /// The container of the innermost synchronous `withContainer` running on this thread (unretained:
    /// that call keeps it alive).
    @usableFromInline var scopedOverride: Unmanaged<Container>?
    /// The dependency edges this thread recorded lately; made by the first one.
    @usableFromInline var edgeMemo: EdgeMemo?
    /// Per entry of `stack`, its span when its container traces factory runs (`FactoryRunTracing`).
    var spans: [(any FactoryRunSpan)?] = []

    init(shard: Int) {
        self.shard = shard
        stack = Self.allocateStack(capacity: capacity)
        childNanos = Self.allocateLines(of: UInt64.self, count: capacity)
    }

    /// Memory that only this thread writes, on cache lines of its own: another thread's frame or
    /// stack allocated next to it would share a line that both write on every resolve.
    static func allocateLines<Element>(of _: Element.Type, count: Int) -> UnsafeMutablePointer<Element> {
        let bytes = (MemoryLayout<Element>.stride * count + 127) & ~127
        return UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 128).bindMemory(to: Element.self, capacity: count)
    }

    static func allocateStack(capacity: Int) -> UnsafeMutablePointer<Unmanaged<AnyRegistration>> {
        allocateLines(of: Unmanaged<AnyRegistration>.self, count: capacity)
    }

    /// The calling thread's frame, created on first use and freed when the thread exits.
    @inlinable
    static var current: UnsafeMutablePointer<ThreadFrame> {
        if let raw = weave_get_thread_slot() {
            return raw.assumingMemoryBound(to: ThreadFrame.self)
        }
        return makeCurrent()
    }

    /// Whether a factory is running on this thread (resolves then record dependency edges).
    @inlinable var insideFactory: Bool { depth != 0 }

    /// The registrations on the stack, outermost first.
    @usableFromInline var registrations: [AnyRegistration] {
        (0..<depth).map { stack[$0].takeUnretainedValue() }
    }

    /// The registration of the run the innermost one is nested in on this thread, if any.
    var parent: Unmanaged<AnyRegistration>? {
        depth >= 2 ? stack[depth &- 2] : nil
    }

    /// The registration whose factory is running innermost, if any.
    @inlinable var innermost: Unmanaged<AnyRegistration>? {
        depth == 0 ? nil : stack[depth &- 1]
    }

    /// The memo entry of an edge from the factory running innermost to `dependency` in the
    /// container whose edge epoch is `epoch`; call inside a factory.
    @inlinable
    func edge(epoch: UInt64, to dependency: UInt64) -> EdgeMemo.Entry {
        EdgeMemo.Entry(epoch: epoch, dependent: stack[depth &- 1]._withUnsafeGuaranteedRef { $0.serial }, dependency: dependency)
    }

    /// Whether this thread recorded the edge lately (`EdgeMemo`).
    @inlinable
    func knows(_ edge: EdgeMemo.Entry) -> Bool {
        edgeMemo?.contains(edge) ?? false
    }

    /// Notes that this thread recorded the edge.
    mutating func remember(_ edge: EdgeMemo.Entry) {
        if edgeMemo == nil { edgeMemo = EdgeMemo() }
        edgeMemo.unsafelyUnwrapped.remember(edge)
    }

    /// Whether `registration`'s key is already being made on this thread.
    @inlinable
    func contains(_ registration: AnyRegistration) -> Bool {
        for index in 0..<depth {
            let match = stack[index]._withUnsafeGuaranteedRef {
                $0.typeID == registration.typeID && $0.key.name == registration.key.name
            }
            if match { return true }
        }
        return false
    }

    /// Whether this resolve is the one in `Container.hitSamplingInterval` that is timed.
    @inlinable @inline(__always)
    mutating func sampleHit() -> Bool {
        sampleCountdown &-= 1
        guard sampleCountdown == 0 else { return false }
        sampleCountdown = Container.hitSamplingInterval
        return true
    }

    @inlinable
    mutating func push(_ registration: AnyRegistration) {
        push(.passUnretained(registration))
    }

    /// Pushes a registration the caller keeps alive (retained, or pinned in its shard).
    @inlinable
    mutating func push(_ registration: Unmanaged<AnyRegistration>) {
        if depth == capacity { grow() }
        stack[depth] = registration
        childNanos[depth] = 0
        depth &+= 1
    }

    /// Ends the innermost run; when it was the outermost, reports the slow runs kept meanwhile.
    @inlinable
    mutating func pop() {
        depth &-= 1
        if depth == 0, trace != nil { flushTrace() }
    }

    /// Reports the slow runs kept; inside an async factory's run, hands them to its trace instead,
    /// to be reported in its chain when its outermost async run ends.
    @usableFromInline
    mutating func flushTrace() {
        let trace = trace.unsafelyUnwrapped
        guard !trace.entries.isEmpty else { return }
        if let run = Container.asyncRun, run.trace.adopt(trace, under: run) { trace.clear() } else { trace.flush() }
    }

    /// The self time of the innermost run, which took `nanos` in all, and its part in its parent's.
    @inlinable
    mutating func finishRun(nanos: UInt64) -> UInt64 {
        let level = depth &- 1
        let own = nanos &- Swift.min(nanos, childNanos[level])
        if level > 0 { childNanos[level &- 1] &+= nanos }
        return own
    }

    /// The span of the run at `level` of the stack, if it has one.
    func span(at level: Int) -> (any FactoryRunSpan)? {
        level < spans.count ? spans[level] : nil
    }

    mutating func setSpan(_ span: (any FactoryRunSpan)?, at level: Int) {
        if level >= spans.count {
            guard span != nil else { return }
            spans.append(contentsOf: repeatElement(nil, count: level + 1 - spans.count))
        }
        spans[level] = span
    }

    /// Adds `nanos` to the time of the runs nested in the innermost run's parent.
    mutating func chargeParent(nanos: UInt64) {
        if depth > 1 { childNanos[depth &- 2] &+= nanos }
    }

    /// Keeps the innermost run (finished), named `service`, for chains; false when it could not be kept.
    mutating func keep(_ run: FactoryRun, service: String, report: ResolutionTrace.Report?) -> Bool {
        if trace == nil { trace = ResolutionTrace() }
        return trace.unsafelyUnwrapped.append(.init(service: service, depth: depth, total: run.total, own: run.selfTime, report: report))
    }

    @usableFromInline
    mutating func grow() {
        let grown = Self.allocateStack(capacity: capacity * 2)
        grown.moveInitialize(from: stack, count: depth)
        stack.deallocate()
        stack = grown
        let nanos = Self.allocateLines(of: UInt64.self, count: capacity * 2)
        nanos.moveInitialize(from: childNanos, count: depth)
        childNanos.deallocate()
        childNanos = nanos
        capacity *= 2
    }

    @usableFromInline
    static func makeCurrent() -> UnsafeMutablePointer<ThreadFrame> {
        let shard = ShardSlots.acquire()
        let frame = allocateLines(of: ThreadFrame.self, count: 1)
        frame.initialize(to: ThreadFrame(shard: shard))
        pthread_setspecific(threadFrameKey, frame)
        weave_set_thread_slot(frame)
        return frame
    }
}

@usableFromInline
let threadFrameKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { raw in
        guard let frame = raw?.assumingMemoryBound(to: ThreadFrame.self) else { return }
        frame.pointee.stack.deallocate()
        frame.pointee.childNanos.deallocate()
        frame.pointee.edgeMemo?.deallocate()
        ShardSlots.release(frame.pointee.shard)
        frame.pointee.live?.release()
        frame.deinitialize(count: 1)
        frame.deallocate()
        // Runs on the exiting thread: a later destructor that resolves makes a new frame.
        weave_set_thread_slot(nil)
    }
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()

/// Which reader shard each live thread has: a new thread takes the one fewest live threads have
/// (the lowest first), and gives it back when it exits. Up to `ShardedLock.shardCount` threads each
/// have their own; round-robin assignment, before, gave two of any 9 threads one shard (and its
/// lock, a line both wrote) once threads had come and gone.
struct ShardSlots {
    /// Live threads per shard.
    private(set) var users: [Int]

    init(shards: Int) {
        users = Array(repeating: 0, count: shards)
    }

    /// A shard for a new thread.
    mutating func acquire() -> Int {
        let shard = users.indices.min { users[$0] < users[$1] }!
        users[shard] += 1
        return shard
    }

    /// Gives back the shard of a thread that exits.
    mutating func release(_ shard: Int) {
        users[shard] -= 1
    }

    /// The process's assignment, over `ShardedLock.shardCount` shards.
    private static let process = Locked(ShardSlots(shards: ShardedLock.shardCount))

    static func acquire() -> Int {
        process.withLock { $0.acquire() }
    }

    static func release(_ shard: Int) {
        process.withLock { $0.release(shard) }
    }
}
