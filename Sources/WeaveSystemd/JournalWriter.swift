import Logging
import WeaveSupport

/// Delivers log entries off the caller's thread, so that logging never blocks serving, health
/// checks or shutdown, even when journald stops reading (stopped, or overloaded: its socket buffer
/// fills and `sd_journal_sendv` blocks).
///
/// Two lanes, each a bounded queue drained in order by a thread of its own:
/// - the journal lane sends with `sd_journal_sendv`; an entry journald refuses (not running) moves
///   on to the standard-error lane, in order;
/// - the standard-error lane writes one line per entry to descriptor 2.
///
/// When the journal lane is full, or its current send has been blocked for longer than
/// `stallTimeout`, journald "cannot take the entry in time": the entry goes to standard error
/// instead (`redirected`). When the standard-error lane is full too, the entry is dropped
/// (`dropped`). Callers only ever take a short lock. Once journald takes entries again, one summary
/// entry (`MESSAGE_ID` `lostEntriesMessageID`) says how many were redirected and dropped.
/// What each lane delivers keeps the order in which it was logged.
///
/// The program makes one and gives it to its handlers (there is no shared one). Its lanes' threads
/// start at its first entry and run until the process ends: logging must work before any service
/// of a `ServiceGroup` starts and after the last one stops (the daemon's last entries follow its
/// group), so they belong to the writer, not to a service. `flush(timeout:)` before exiting.
public final class JournalWriter: @unchecked Sendable {
    // @unchecked: every mutable property is read and written only with `mutex` held; the lanes'
    // threads and the callers synchronise through it and the two condition variables.

    /// Counts since the writer started.
    public struct Statistics: Sendable, Equatable {
        /// Entries journald took.
        public var journaled: UInt64 = 0
        /// Entries meant for journald that went to standard error, because journald was stalled,
        /// unreachable, or its lane was full.
        public var redirected: UInt64 = 0
        /// Entries lost because no destination could take them in time.
        public var dropped: UInt64 = 0
    }

    /// The `MESSAGE_ID` of the summary logged once journald takes entries again after losing some.
    public static let lostEntriesMessageID = "646c4076a6fc4b3aa2a7771041bcbac6"

    /// The most entries each lane holds.
    public let capacity: Int
    /// How long one send to journald may block before new entries go to standard error.
    public let stallTimeout: Duration
    private let stallNanos: UInt64

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let journalReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let lineReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let idle = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var journalQueue = EntryQueue()
    private var lineQueue = EntryQueue()
    private var journalBusySince: UInt64 = 0 // monotonic ns when the current send began; 0 when none
    private var lineBusy = false
    private var statistics = Statistics()
    private var unreported = (redirected: UInt64(0), dropped: UInt64(0), since: UInt64(0))
    private var started = false

    public init(capacity: Int = 4_096, stallTimeout: Duration = .milliseconds(250)) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
        self.stallTimeout = stallTimeout
        stallNanos = stallTimeout.nonNegativeNanoseconds
        pthread_mutex_init(mutex, nil)
        for condition in [journalReady, lineReady, idle] {
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        }
    }

    /// The counts so far.
    public var counts: Statistics {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return statistics
    }

    /// Queues `entry` for journald, or for standard error when journald cannot take it in time.
    func submitToJournal(_ entry: JournalEntry) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        startIfNeeded()
        let stalled = journalBusySince != 0 && MonotonicClock.nanos() - journalBusySince > stallNanos
        if !stalled && journalQueue.count < capacity {
            journalQueue.append(entry)
            pthread_cond_signal(journalReady)
            return
        }
        enqueueLineLocked(entry, redirected: true)
    }

    /// Queues `entry` as one line on standard error.
    func submitLine(_ entry: JournalEntry) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        startIfNeeded()
        enqueueLineLocked(entry, redirected: false)
    }

    /// Waits until both lanes are empty and idle, or `timeout` passes; true when everything was
    /// delivered. For the end of a process, whose last entries should not be lost.
    @discardableResult
    public func flush(timeout: Duration) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        // The condition variables wait on CLOCK_MONOTONIC, MonotonicClock's clock.
        let end = MonotonicClock.nanos() + timeout.nonNegativeNanoseconds
        var deadline = timespec(tv_sec: Int(end / 1_000_000_000), tv_nsec: Int(end % 1_000_000_000))
        while !(journalQueue.isEmpty && lineQueue.isEmpty && journalBusySince == 0 && !lineBusy) {
            if pthread_cond_timedwait(idle, mutex, &deadline) == ETIMEDOUT { return false }
        }
        return true
    }

    // MARK: Lanes

    /// Queues `entry` on the standard-error lane (counted as redirected when it was meant for
    /// journald), or drops and counts it when that lane is full.
    private func enqueueLineLocked(_ entry: JournalEntry, redirected: Bool) {
        guard lineQueue.count < capacity else {
            statistics.dropped += 1
            noteLossLocked(dropped: 1)
            return
        }
        lineQueue.append(entry)
        if redirected {
            statistics.redirected += 1
            noteLossLocked(redirected: 1)
        }
        pthread_cond_signal(lineReady)
    }

    private func noteLossLocked(redirected: UInt64 = 0, dropped: UInt64 = 0) {
        if unreported.redirected == 0 && unreported.dropped == 0 { unreported.since = MonotonicClock.nanos() }
        unreported.redirected += redirected
        unreported.dropped += dropped
    }

    private func startIfNeeded() {
        guard !started else { return }
        started = true
        Self.spawn { [self] in runJournalLane() }
        Self.spawn { [self] in runLineLane() }
    }

    private func runJournalLane() {
        pthread_mutex_lock(mutex)
        while true {
            while journalQueue.isEmpty { pthread_cond_wait(journalReady, mutex) }
            let entry = journalQueue.removeFirst()
            if sendLocked(entry), unreported.redirected > 0 || unreported.dropped > 0 {
                sendLocked(lossSummaryLocked(after: entry))
            }
            pthread_cond_broadcast(idle)
        }
    }

    /// Sends `entry` to journald without holding the lock (the send may block; `journalBusySince`
    /// tells callers how long), or redirects it to standard error when journald refuses it. Returns whether journald took it.
    @discardableResult
    private func sendLocked(_ entry: JournalEntry) -> Bool {
        journalBusySince = MonotonicClock.nanos()
        pthread_mutex_unlock(mutex)
        let result = Journal.send(entry.fields)
        pthread_mutex_lock(mutex)
        journalBusySince = 0
        guard result >= 0 else {
            enqueueLineLocked(entry, redirected: true)
            return false
        }
        statistics.journaled += 1
        return true
    }

    private func runLineLane() {
        pthread_mutex_lock(mutex)
        while true {
            while lineQueue.isEmpty { pthread_cond_wait(lineReady, mutex) }
            let entry = lineQueue.removeFirst()
            lineBusy = true
            pthread_mutex_unlock(mutex)
            entry.writeLine(to: 2)
            pthread_mutex_lock(mutex)
            lineBusy = false
            pthread_cond_broadcast(idle)
        }
    }

    /// The summary of what was lost since the last one, under the identity of `entry`'s program.
    private func lossSummaryLocked(after entry: JournalEntry) -> JournalEntry {
        let seconds = Double((MonotonicClock.nanos() - unreported.since) / 1_000_000) / 1_000
        var summary = JournalEntry(
            level: .warning,
            message: "journald did not take log entries for \(seconds) s: \(unreported.redirected) went to standard error, "
                + "\(unreported.dropped) were dropped",
            metadata: ["redirected": "\(unreported.redirected)", "dropped": "\(unreported.dropped)"],
            label: entry.label, identifier: entry.identifier, file: #fileID, function: #function, line: #line,
            fieldPrefix: String(entry.labelField.dropLast("LOGGER".count)))
        summary.messageID = Self.lostEntriesMessageID
        unreported = (0, 0, 0)
        return summary
    }

    /// Starts a detached thread running `body`, with every signal blocked (signals are for the
    /// process's own handlers, not for a lane that may sit in a blocking send).
    private static func spawn(_ body: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { pointer in
            let box = Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(status == 0, "JournalWriter: cannot start a thread: \(status)")
        pthread_detach(thread)
    }

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}

/// A first-in, first-out queue of entries with O(1) removal at the front.
struct EntryQueue {
    private var items: [JournalEntry] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    mutating func append(_ entry: JournalEntry) { items.append(entry) }

    mutating func removeFirst() -> JournalEntry {
        let entry = items[head]
        head += 1
        if head >= 64 && head * 2 >= items.count { // reclaim the consumed front now and then
            items.removeFirst(head)
            head = 0
        }
        return entry
    }
}
