import Logging
import Testing
@testable import WeaveSystemd

@Suite struct JournalEntryTests {
    private struct Failure: Error, CustomStringConvertible, ErrnoCarrying {
        var description: String { "connection refused" }
        var errnoValue: Int32 { 111 }
    }

    private func entry(_ metadata: Logger.Metadata, level: Logger.Level = .warning) -> JournalEntry {
        JournalEntry(level: level, message: "Health of disk: healthy → degraded\nsecond line", metadata: metadata,
                     label: "weave.health", identifier: "weave-healthd", file: "WeaveDI/HealthMonitor.swift",
                     function: "apply()", line: 42, fieldPrefix: "WEAVE_")
    }

    @Test func standardFieldsAndPriority() {
        let fields = entry(["check": "disk"]).fields
        #expect(fields.contains("MESSAGE=Health of disk: healthy → degraded\nsecond line"))
        #expect(fields.contains("PRIORITY=4"))
        #expect(fields.contains("SYSLOG_IDENTIFIER=weave-healthd"))
        #expect(fields.contains("CODE_FILE=WeaveDI/HealthMonitor.swift"))
        #expect(fields.contains("CODE_LINE=42"))
        #expect(fields.contains("CODE_FUNC=apply()"))
        #expect(fields.contains("WEAVE_CHECK=disk"))
        #expect(fields.contains("WEAVE_LOGGER=weave.health"))
        #expect(!fields.contains { $0.hasPrefix("UNIT=") || $0.hasPrefix("_") })
    }

    @Test(arguments: [(Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2)])
    func priorities(_ level: Logger.Level, _ priority: Int) {
        #expect(entry([:], level: level).priority == priority)
    }

    @Test func messageIDAndErrnoAreJournaldsOwn() {
        let fields = entry(["message_id": "d47c2ece5e194c99bc8756c4e375df39", "errno": .stringConvertible(Failure())]).fields
        #expect(fields.contains("MESSAGE_ID=d47c2ece5e194c99bc8756c4e375df39"))
        #expect(fields.contains("ERRNO=111"))
        let plain = entry(["errno": "2"]).fields
        #expect(plain.contains("ERRNO=2"))
    }

    @Test func aMalformedMessageIDStaysMetadata() {
        let fields = entry(["message_id": "not-an-id"]).fields
        #expect(!fields.contains { $0.hasPrefix("MESSAGE_ID=") })
        #expect(fields.contains("WEAVE_MESSAGE_ID=not-an-id"))
    }

    @Test func nestedMetadataIsFlattened() {
        let fields = entry(["request": ["path": "/metrics", "headers": ["a", "b"]]]).fields
        #expect(fields.contains("WEAVE_REQUEST_PATH=/metrics"))
        #expect(fields.contains("WEAVE_REQUEST_HEADERS_0=a"))
        #expect(fields.contains("WEAVE_REQUEST_HEADERS_1=b"))
    }

    @Test func fallbackIsOneReadableLine() {
        let line = entry(["check": "disk", "reason": "3% free", "message_id": "d47c2ece5e194c99bc8756c4e375df39"]).oneLine
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().firstIndex(of: "\n") == nil)
        #expect(line.contains(#" warning weave.health: Health of disk: healthy → degraded\u{A}second line"#))
        #expect(line.contains("MESSAGE_ID=d47c2ece5e194c99bc8756c4e375df39"))
        #expect(line.contains("WEAVE_CHECK=disk WEAVE_REASON=\"3% free\""))
        #expect(!line.contains("WEAVE_LOGGER"))
    }
}
