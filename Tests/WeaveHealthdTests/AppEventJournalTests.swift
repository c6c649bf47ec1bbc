import Glibc
import Logging
import Testing
import WeaveDI
import WeaveHealth
@testable import WeaveHealthd
import WeaveMemoryPressure
import WeaveObservability
import WeaveSupport
import WeaveTestSupport

@Suite struct AppEventJournalTests {
    private let generous = LogRateLimit(burst: 1_000, window: .seconds(10))

    @Test func anApplicationsLogIsWrittenOnceEachEventWithItsFields() throws {
        let log = ContainerEventLog(capacity: 16)
        log.append(.slowResolution, ["dependency": "ReportBuilder", "duration_usec": "52000", "threshold_usec": "10000"])
        log.append(.resolutionError, ["dependency": "RefundGateway", "error_kind": "factory_failed", "error": "down", "extra": "dropped"])
        // An application's check named like one of the daemon's, trying to pass as the daemon's own:
        // the entry still says which application (WEAVE_APP), which it cannot set or remove.
        log.append(.healthTransition, ["check": "disk-root", "state_from": "healthy", "state_to": "degraded", "reason": "slow",
                                       "app": "", "message_id": "forged"])
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: log.started - 1, logger: records.logger)
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        #expect(journal.after("orders") == 3)
        #expect(records.count(WeaveEvent.slowResolution.messageID) { $0["app"] == "orders" && $0["duration_usec"] == "52000" } == 1)
        #expect(records.count(WeaveEvent.resolutionError.messageID) { $0["error_kind"] == "factory_failed" && $0["extra"] == nil } == 1)
        #expect(records.count(WeaveEvent.healthTransition.messageID) { $0["state_to"] == "degraded" && $0["app"] == "orders" } == 1)
        #expect(records.entries.map(\.level) == [.warning, .error, .warning])
    }

    /// An application read by two at once (its watch, and a round that listed it before the watch
    /// began) has each event written once: what is written is claimed first.
    @Test func aPageReadByTwoAtOnceIsWrittenOnce() async {
        let log = ContainerEventLog(capacity: 256)
        for index in 0..<200 { log.append(.resolutionError, ["dependency": "D\(index)", "error_kind": "factory_failed", "error": "down"]) }
        let page = Array(log.json(after: 0, limit: 256).utf8)
        let records = LogRecords()
        let journal = AppEventJournal(limit: LogRateLimit(burst: 10_000, window: .seconds(10)), started: log.started - 1,
                                      bounds: (LogRateLimit(burst: 10_000, window: .seconds(10)), LogRateLimit(burst: 10_000, window: .seconds(10))),
                                      logger: records.logger)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { try? journal.ingest("orders", page) } }
        }
        #expect(records.count(WeaveEvent.resolutionError.messageID) == 200)
        #expect(journal.after("orders") == 200)
    }

    /// One process with 150 sockets cannot flood the journal, nor take the host's whole share:
    /// past each application's limit, the applications of one user and all of the host's are
    /// bounded too (windows longer than the test: counts only).
    @Test func theApplicationsOfOneUserAndOfTheHostAreBounded() throws {
        let page = Self.page(events: 20)
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: 0,
                                      bounds: (LogRateLimit(burst: 6, window: .seconds(60)), LogRateLimit(burst: 12, window: .seconds(60))),
                                      logger: records.logger)
        for index in 0..<150 { try journal.ingest("flood-\(index)", page, owner: 2_000) }
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 6, "the user's bound")
        try journal.ingest("orders", page, owner: 1_000)
        try journal.ingest("billing", page, owner: nil)
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 12, "another user's records, up to the host's bound")
    }

    /// The bounds follow `log_rate_limit`: 60 and 120 every 10 s by default; an operator who raises
    /// it to see every event (a reload too) raises them with it.
    @Test func theBoundsFollowTheRateLimit() throws {
        let (owner, host) = AppEventJournal.bounds(for: .default)
        #expect(owner == LogRateLimit(burst: 60, window: .seconds(10)) && host == LogRateLimit(burst: 120, window: .seconds(10)))
        let records = LogRecords()
        let journal = AppEventJournal(limit: .default, started: 0, logger: records.logger)
        journal.limit = LogRateLimit(burst: 100_000, window: .seconds(10))
        for index in 0..<30 { try journal.ingest("app-\(index)", Self.page(events: 20), owner: 2_000) }
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 600, "every event, past 60 and 120")
    }

    /// Each bound says once per window how many it suppressed: a user's (with its uid) and the
    /// host's (without). (Polled: the summaries are written by tasks at the windows' end, which a
    /// busy test run delays.)
    @Test func eachBoundSummarisesWhatItSuppressed() async throws {
        let generousBound = LogRateLimit(burst: 1_000, window: .seconds(60))
        for (owner, bounds) in [(UInt32(7), (LogRateLimit(burst: 2, window: .milliseconds(100)), generousBound)),
                                (nil, (generousBound, LogRateLimit(burst: 2, window: .milliseconds(100))))] {
            let records = LogRecords()
            let journal = AppEventJournal(limit: generous, started: 0, bounds: bounds, logger: records.logger)
            try journal.ingest("x", Self.page(events: 10), owner: owner)
            await eventually { records.entries.count >= 3 }
            #expect(records.count(WeaveEvent.memoryPressure.messageID) == 2)
            let uid: Logger.MetadataValue? = owner.map { "\($0)" }
            #expect(records.count(WeaveEvent.recordsSuppressed.messageID) { $0["uid"] == uid && $0["suppressed"] == "8" } == 1, "\(records.entries)")
        }
    }

    /// A page that is not one is refused and said once, until the application serves a valid one.
    @Test func aRefusedPageIsSaidOnce() throws {
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
        for _ in 0..<3 { #expect(throws: FetchFailure.self) { try journal.ingest("orders", Array("{}".utf8)) } }
        #expect(records.entries.filter { $0.message.contains("is not an event log's page") }.count == 1)
        try journal.ingest("orders", Self.page(events: 1))
        #expect(throws: FetchFailure.self) { try journal.ingest("orders", Array("[]".utf8)) }
        #expect(records.entries.filter { $0.message.contains("is not an event log's page") }.count == 2)
    }

    /// A log of `events` memory-pressure events, as a page from its start.
    private static func page(events: Int) -> [UInt8] {
        let log = ContainerEventLog(capacity: 64)
        for _ in 0..<events { log.append(.memoryPressure, [:]) }
        return Array(log.json(after: 0, limit: 256).utf8)
    }

    /// A slow resolution's chain reaches the journal (#55): `WEAVE_CHAIN`, `WEAVE_SELF_USEC`,
    /// `WEAVE_SLOWEST` and the message, inert (a hostile name's control and bidi characters escaped)
    /// and bounded (each field 512 bytes, as every event field).
    @Test func aSlowResolutionsChainIsWrittenInertAndBounded() throws {
        let log = ContainerEventLog(capacity: 8)
        let hostile = "Evil\u{1B}[2J\u{202E}gnp"
        log.append(.slowResolution, ["dependency": "ReportBuilder", "duration_usec": "30000", "threshold_usec": "10000",
                                     "chain": "OrderService → ReportBuilder → \(hostile) → " + String(repeating: "x", count: 2_000),
                                     "self_usec": "10000", "slowest": hostile])
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: log.started - 1, logger: records.logger)
        try journal.ingest("orders", Array(log.json(after: 0, limit: 256).utf8))
        let entry = try #require(records.entries.first)
        let chain = "\(entry.metadata["chain"] ?? "")"
        #expect(chain.hasPrefix(#"OrderService → ReportBuilder → Evil\u{1B}[2J\u{202E}gnp → xx"#) && chain.utf8.count <= 520)
        #expect(entry.metadata["self_usec"] == "10000" && entry.metadata["slowest"] == #"Evil\u{1B}[2J\u{202E}gnp"#)
        #expect(entry.message.hasPrefix("Application orders: slow resolution of ReportBuilder: 30.0 ms (threshold 10.0 ms); chain OrderService → "))
        #expect(!entry.message.unicodeScalars.contains("\u{1B}") && !entry.message.unicodeScalars.contains("\u{202E}"))
    }

    /// Dropped before they were read: the daemon says how many, once, and goes on from the oldest kept.
    @Test func eventsTheLogDroppedAreCountedAsMissed() throws {
        let log = ContainerEventLog(capacity: 8)
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: log.started - 1, logger: records.logger)
        log.append(.memoryPressure, [:])
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        for _ in 0..<20 { log.append(.memoryPressure, [:]) }
        let kept = log.events(after: 0, limit: 256)
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        #expect(records.count(WeaveEvent.appEventsMissed.messageID) { $0["missed"] == "\(kept.first - 2)" } == 1)
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 1 + kept.events.count)
        #expect(journal.after("orders") == 21)
    }

    /// A log that began before this daemon did was the previous daemon's to write: read from its end.
    @Test func aLogOlderThanTheDaemonIsReadFromItsEnd() throws {
        let log = ContainerEventLog()
        for _ in 0..<5 { log.append(.memoryPressure, [:]) }
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: log.started + 1, logger: records.logger)
        try journal.ingest("orders", Array(log.json(after: 0, limit: 256).utf8))
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 0)
        log.append(.memoryPressure, [:])
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 1)
    }

    /// A restart (an upgrade, the watchdog, a crash) goes on where the previous daemon stopped:
    /// the events made meanwhile are written once, those written before are not written again,
    /// and an application the previous daemon never read is read from its start.
    @Test func aRestartedDaemonGoesOnWhereThePreviousOneStopped() async throws {
        let directory = "/tmp/weave-positions-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        mkdir(directory, 0o700)
        defer {
            unlink(directory + "/" + EventPositions.fileName)
            rmdir(directory)
        }
        let positions = StateFile(path: directory + "/" + EventPositions.fileName, what: EventPositions.what)
        let orders = ContainerEventLog(), billing = ContainerEventLog()
        for _ in 0..<3 { orders.append(.memoryPressure, [:]) }
        let before = LogRecords()
        let first = AppEventJournal(limit: generous, started: orders.started - 1, file: positions, logger: before.logger)
        try first.ingest("orders", Array(orders.json(after: first.after("orders"), limit: 256).utf8))
        await first.persist(with: BlockingCalls())
        #expect(before.count(WeaveEvent.memoryPressure.messageID) == 3)

        // Down for a while: both applications go on, billing is new.
        for _ in 0..<4 { orders.append(.memoryPressure, [:]) }
        for _ in 0..<2 { billing.append(.memoryPressure, [:]) }
        let after = LogRecords()
        let second = AppEventJournal(limit: generous, started: orders.started + 60, file: positions, logger: after.logger)
        #expect(second.after("orders") == 3)
        try second.ingest("orders", Array(orders.json(after: second.after("orders"), limit: 256).utf8))
        try second.ingest("billing", Array(billing.json(after: second.after("billing"), limit: 256).utf8))
        #expect(after.count(WeaveEvent.memoryPressure.messageID) { $0["app"] == "orders" } == 4)
        #expect(after.entries.filter { $0.metadata["app"] == "orders" }.map { "\($0.metadata["event_seq"]!)" } == ["4", "5", "6", "7"])
        #expect(after.count(WeaveEvent.memoryPressure.messageID) { $0["app"] == "billing" } == 2)
        await second.persist(with: BlockingCalls())
        #expect(EventPositions.parse(Array(try #require(readTextFile(positions.path)).utf8))
            == ["orders": .init(started: orders.started, last: 7), "billing": .init(started: billing.started, last: 2)])
    }

    /// Another run of an application (its log's `started` changed): one "restarted" entry with both
    /// start times, and the new run's log read from its start.
    @Test func aNewRunOfAnApplicationIsOneRestartedEntry() throws {
        let old = ContainerEventLog(), new = ContainerEventLog()
        old.append(.memoryPressure, [:])
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: old.started - 1, logger: records.logger)
        try journal.ingest("orders", Array(old.json(after: journal.after("orders"), limit: 256).utf8))
        #expect(records.count(WeaveEvent.appRestarted.messageID) == 0)
        new.append(.memoryPressure, [:])
        try journal.ingest("orders", Array(new.json(after: journal.after("orders"), limit: 256).utf8))
        try journal.ingest("orders", Array(new.json(after: journal.after("orders"), limit: 256).utf8))
        #expect(records.count(WeaveEvent.appRestarted.messageID) {
            $0["started"] == "\(Timestamp.rfc3339(new.started))" && $0["previous_started"] == "\(Timestamp.rfc3339(old.started))"
        } == 1)
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 2)
    }

    /// Lifecycle entries obey the events' bounds (#66): an application whose log says a new run at
    /// every read (200 reads) writes at most the rate limit's burst of "restarted" entries and a
    /// summary; a run that says it began in the future is refused, with the reason, not written.
    @Test func restartsAreBoundedAndAFutureStartIsRefused() async throws {
        let records = LogRecords()
        let limit = LogRateLimit(burst: 5, window: .seconds(3_600))
        let journal = AppEventJournal(limit: limit, started: 0, logger: records.logger)
        let now = WallClock.now()
        func page(started: Double) -> [UInt8] { Array(#"{"started":\#(started),"first":1,"next":1,"events":[]}"#.utf8) }
        for run in 0..<200 { try journal.ingest("flapping", page(started: now - 1_000 + Double(run)), owner: 2001) }
        #expect(records.count(WeaveEvent.appRestarted.messageID) == 5, "the burst, then suppressed")
        #expect(journal.admitLifecycle("flapping", .appUp, level: .notice, owner: 2001), "another kind has its own limit")
        let future = now + 3_600
        #expect(throws: FetchFailure.self) { try journal.ingest("ahead", page(started: future)) }
        let refusal = records.entries.first { $0.message.contains("ahead") }
        #expect(refusal?.message.contains("began \(Timestamp.rfc3339(future)), in the future") == true,
                "\(refusal?.message ?? "nothing said")")
        #expect(journal.after("ahead") == 0, "no place kept for it")
        try journal.ingest("ahead", page(started: now + AppEventJournal.maxClockSkew / 2))
        #expect(records.count(WeaveEvent.appRestarted.messageID) == 5, "a small skew is a first run, read")
    }

    /// A kept file that is not one (cut short, edited, another program's) is said once and not
    /// used: the daemon starts as a first start does.
    @Test func aBrokenPositionsFileIsNotUsed() throws {
        let path = "/tmp/weave-positions-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
        defer { unlink(path) }
        for broken in [#"{"apps":{"orders":{"started":1,"#, #"{"apps":{"orders":{"started":1,"last":-1}}}"#, "[]", "",
                       #"{"apps":{"orders":{"started":1,"last":2.5}}}"#] {
            let handle = fopen(path, "w")!
            fputs(broken, handle)
            fclose(handle)
            let records = LogRecords()
            let log = ContainerEventLog()
            log.append(.memoryPressure, [:])
            let file = StateFile(path: path, what: EventPositions.what, logger: records.logger)
            let journal = AppEventJournal(limit: generous, started: log.started + 1, file: file, logger: records.logger)
            #expect(records.entries.count == 1 && records.entries[0].message.contains("Cannot read"), "\(broken)")
            try journal.ingest("orders", Array(log.json(after: 0, limit: 256).utf8))
            #expect(records.count(WeaveEvent.memoryPressure.messageID) == 0, "read from its end, as without a file")
        }
    }

    @Test func theRateLimitHoldsPerApplicationAndKind() throws {
        let log = ContainerEventLog()
        for _ in 0..<9 { log.append(.resolutionError, ["dependency": "X", "error_kind": "factory_failed", "error": "e"]) }
        log.append(.memoryPressure, [:])
        let records = LogRecords()
        let journal = AppEventJournal(limit: LogRateLimit(burst: 5, window: .seconds(60)), started: log.started - 1, logger: records.logger)
        try journal.ingest("orders", Array(log.json(after: 0, limit: 256).utf8))
        try journal.ingest("billing", Array(log.json(after: 0, limit: 256).utf8))
        #expect(records.count(WeaveEvent.resolutionError.messageID) { $0["app"] == "orders" } == 5)
        #expect(records.count(WeaveEvent.resolutionError.messageID) { $0["app"] == "billing" } == 5)
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 2)
    }

    /// What an application sends is checked before anything is written: a page that is not one is
    /// refused whole, with a reason, and moves no place.
    @Test(arguments: [
        #"{"started":1,"first":1,"next":3,"events":[{"seq":2,"time":1,"kind":"memory_pressure","fields":{}},{"seq":1,"time":1,"kind":"memory_pressure","fields":{}}]}"#,
        #"{"started":1,"first":1,"next":2,"events":[{"seq":5,"time":1,"kind":"memory_pressure","fields":{}}]}"#,
        #"{"started":1,"first":-1,"next":2,"events":[]}"#,
        #"{"started":1,"first":3,"next":2,"events":[]}"#,
        #"{"started":1,"first":1,"next":1e300,"events":[]}"#,
        #"{"started":1,"first":1,"next":3,"events":[{"seq":1,"time":1,"kind":"slow_resolution","fields":{"dependency":7}}]}"#,
        #"{"started":1,"first":1,"next":3,"events":{}}"#,
        #"[1,2,3]"#,
        "",
    ])
    func aPageThatIsNotOneIsRefused(_ body: String) {
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
        #expect(throws: FetchFailure.self) { try journal.ingest("orders", Array(body.utf8)) }
        #expect(journal.after("orders") == 0 && records.entries.count == 1, "refused, and said")
    }

    /// A field reaches a log line and a terminal: escape sequences, line breaks and bidi overrides arrive inert.
    @Test func controlAndBidiCharactersArriveInert() throws {
        let body = #"{"started":1,"first":1,"next":2,"events":[{"seq":1,"time":1,"kind":"health_transition","fields":"#
            + #"{"check":"db\u001b[2J","state_from":"healthy","state_to":"degraded","reason":"a\nforged line \u202egnp.exe"}}]}"#
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
        try journal.ingest("orders", Array(body.utf8))
        let entry = try #require(records.entries.first)
        #expect(entry.message == #"Application orders: health check db\u{1B}[2J healthy → degraded: a\u{A}forged line \u{202E}gnp.exe"#)
        #expect(entry.metadata["check"] == #"db\u{1B}[2J"#)
    }

    @Test func longFieldsAndUnknownKindsAreCutAndSkipped() throws {
        let long = String(repeating: "é", count: 2_000)
        let body = #"{"started":1,"first":1,"next":3,"events":[{"seq":1,"time":1,"kind":"future_kind","fields":{}},"#
            + #"{"seq":2,"time":1,"kind":"resolution_error","fields":{"dependency":"\#(long)","error_kind":"cycle","error":"e"}}]}"#
        let records = LogRecords()
        let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
        try journal.ingest("orders", Array(body.utf8))
        let dependency = records.entries.first?.metadata["dependency"].map { "\($0)" } ?? ""
        #expect(records.entries.count == 1 && dependency.utf8.count <= 512 && dependency.hasSuffix("…"))
        #expect(journal.after("orders") == 2)
    }
}
