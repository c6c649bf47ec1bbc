import Logging
import Testing
@testable import weave_healthd
import WeaveDI
import WeaveObservability
import WeaveSupport

/// What a logger was given, for the tests to read.
private final class Records: Sendable {
    let entries = Locked<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
    var logger: Logger {
        Logger(label: "test") { _ in Capture(records: self) }
    }

    func count(_ messageID: String, _ filter: (Logger.Metadata) -> Bool = { _ in true }) -> Int {
        entries.withLock { $0.filter { $0.metadata["message_id"] == .string(messageID) && filter($0.metadata) }.count }
    }

    private struct Capture: LogHandler {
        let records: Records
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
                 function: String, line: UInt) {
            records.entries.withLock { $0.append((level, "\(message)", metadata ?? [:])) }
        }
    }
}

@Suite struct AppEventJournalTests {
    private let generous = LogRateLimit(burst: 1_000, window: .seconds(10))

    @Test func anApplicationsLogIsWrittenOnceEachEventWithItsFields() throws {
        let log = ContainerEventLog(capacity: 16)
        log.append(.slowResolution, ["dependency": "ReportBuilder", "duration_usec": "52000", "threshold_usec": "10000"])
        log.append(.resolutionError, ["dependency": "RefundGateway", "error_kind": "factory_failed", "error": "down", "extra": "dropped"])
        log.append(.healthTransition, ["check": "payments", "state_from": "healthy", "state_to": "degraded", "reason": "slow"])
        let records = Records()
        let journal = AppEventJournal(limit: generous, started: log.started - 1, logger: records.logger)
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        #expect(journal.after("orders") == 3)
        #expect(records.count(WeaveEvent.slowResolution.messageID) { $0["app"] == "orders" && $0["duration_usec"] == "52000" } == 1)
        #expect(records.count(WeaveEvent.resolutionError.messageID) { $0["error_kind"] == "factory_failed" && $0["extra"] == nil } == 1)
        #expect(records.count(WeaveEvent.healthTransition.messageID) { $0["state_to"] == "degraded" } == 1)
        #expect(records.entries.withLock { $0.map(\.level) } == [.warning, .error, .warning])
    }

    /// Dropped before they were read: the daemon says how many, once, and goes on from the oldest kept.
    @Test func eventsTheLogDroppedAreCountedAsMissed() throws {
        let log = ContainerEventLog(capacity: 8)
        let records = Records()
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
        let records = Records()
        let journal = AppEventJournal(limit: generous, started: log.started + 1, logger: records.logger)
        try journal.ingest("orders", Array(log.json(after: 0, limit: 256).utf8))
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 0)
        log.append(.memoryPressure, [:])
        try journal.ingest("orders", Array(log.json(after: journal.after("orders"), limit: 256).utf8))
        #expect(records.count(WeaveEvent.memoryPressure.messageID) == 1)
    }

    @Test func theRateLimitHoldsPerApplicationAndKind() throws {
        let log = ContainerEventLog()
        for _ in 0..<9 { log.append(.resolutionError, ["dependency": "X", "error_kind": "factory_failed", "error": "e"]) }
        log.append(.memoryPressure, [:])
        let records = Records()
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
        let records = Records()
        let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
        #expect(throws: FetchFailure.self) { try journal.ingest("orders", Array(body.utf8)) }
        #expect(journal.after("orders") == 0 && records.entries.withLock(\.isEmpty))
    }

    /// A field reaches a log line and a terminal: escape sequences, line breaks and bidi overrides arrive inert.
    @Test func controlAndBidiCharactersArriveInert() throws {
        let body = #"{"started":1,"first":1,"next":2,"events":[{"seq":1,"time":1,"kind":"health_transition","fields":"#
            + #"{"check":"db\u001b[2J","state_from":"healthy","state_to":"degraded","reason":"a\nforged line \u202egnp.exe"}}]}"#
        let records = Records()
        let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
        try journal.ingest("orders", Array(body.utf8))
        let entry = try #require(records.entries.withLock { $0.first })
        #expect(entry.message == #"Application orders: health check db\u{1B}[2J healthy → degraded: a\u{A}forged line \u{202E}gnp.exe"#)
        #expect(entry.metadata["check"] == #"db\u{1B}[2J"#)
    }

    @Test func longFieldsAndUnknownKindsAreCutAndSkipped() throws {
        let long = String(repeating: "é", count: 2_000)
        let body = #"{"started":1,"first":1,"next":3,"events":[{"seq":1,"time":1,"kind":"future_kind","fields":{}},"#
            + #"{"seq":2,"time":1,"kind":"resolution_error","fields":{"dependency":"\#(long)","error_kind":"cycle","error":"e"}}]}"#
        let records = Records()
        let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
        try journal.ingest("orders", Array(body.utf8))
        let dependency = records.entries.withLock { $0.first?.metadata["dependency"] }.map { "\($0)" } ?? ""
        #expect(records.entries.withLock(\.count) == 1 && dependency.utf8.count <= 512 && dependency.hasSuffix("…"))
        #expect(journal.after("orders") == 2)
    }
}
