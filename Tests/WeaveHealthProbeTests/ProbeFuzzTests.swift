import Testing
@testable import weave_health
import WeaveReaders
import WeaveSupport
import WeaveTestSupport

/// Damaged answers from a daemon: every truncation, every byte replaced by each hostile byte, and
/// every hostile token inserted at every position of a real chunked `/health` response (over 10,000
/// cases, deterministic). The HTTP, JSON and metrics parsers must answer with a value or a
/// `ProbeError`, never crash: a probe that traps reports nothing to systemd, Docker or Nagios.
@Suite struct ProbeFuzzTests {
    static let json = #"{"status":"warn","version":"0.1.0","checks":{"db:status":[{"componentId":"db","status":"warn","#
        + #""time":"2026-11-23T10:00:00Z","observedValue":1.5e-3,"observedUnit":"s","output":"slow \u00e9\n"}]}}"#
    static let response = "HTTP/1.1 200 OK\r\nContent-Type: application/health+json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + String(json.utf8.count, radix: 16) + "\r\n" + json + "\r\n0\r\n\r\n"
    static let hostileBytes = Array("0-9afF:;\r\n\"\\{}[],\u{1B}\0 ".utf8) + [0xFF, 0xC3]
    static let hostileTokens = ["-1", "7fffffffffffffff", "99999999999999999999", "\r\n", "\r\n\r\n", "Content-Length: -1\r\n",
                                "1e999", "\\u0000", "\\ud800", "[[[[[[[[", "\"", "{\"a\":"]

    @Test func damagedResponsesNeverCrash() async {
        // Seconds in a debug build: on a thread of its own (a crash fails the test either way).
        let cases = await onThreadOfItsOwn(Self.attemptAll)
        #expect(cases > 10_000)
        #expect(throws: Never.self) { try HTTPReply.parse(Array(Self.response.utf8), complete: true) }
    }

    /// Parses every damaged response; returns how many there were.
    static func attemptAll() -> Int {
        let bytes = Array(response.utf8)
        var cases = 0
        func attempt(_ candidate: [UInt8]) {
            cases += 1
            for complete in [false, true] {
                guard let reply = try? HTTPReply.parse(candidate, complete: complete) else { continue }
                _ = JSONValue.parse(reply.body)
                _ = try? HealthDocument(reply.body)
                _ = try? MetricsTable(exposition: reply.body)
            }
        }
        for length in 0...bytes.count { attempt(Array(bytes[..<length])) }
        for index in bytes.indices {
            for replacement in hostileBytes {
                var candidate = bytes
                candidate[index] = replacement
                attempt(candidate)
            }
        }
        for index in bytes.indices {
            for token in hostileTokens {
                var candidate = bytes
                candidate.insert(contentsOf: Array(token.utf8), at: index)
                attempt(candidate)
            }
        }
        return cases
    }
}
