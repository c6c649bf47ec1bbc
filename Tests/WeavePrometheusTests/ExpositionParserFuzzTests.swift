import Foundation
import Testing
@testable import WeavePrometheus
import WeaveTestSupport

/// Damaged expositions, as a hostile or broken application could send them: every truncation, every
/// byte replaced by each hostile byte, and hostile tokens inserted at every position of a real
/// exposition in both formats (deterministic, about 20,000 cases). The parser must accept or reject
/// with a line number, never crash; and whatever it accepts, relabelled, merged with another
/// application's families and rendered again as the daemon does, must itself be a valid exposition,
/// or one application could break the scrape of all. With `WEAVE_FUZZ_SAMPLES=DIR`, one merged
/// rendering in 25 is written there, for `Scripts/test` to hand to promtool and the Python parsers.
@Suite struct ExpositionParserFuzzTests {
    static let families: [MetricFamily] = [
        .counter("weave_resolutions", "Resolves.", [([("service", "Db \"main\"\\\n")], 3), ([("service", "b")], 1)]),
        MetricFamily(name: "weave_resolve_duration_seconds", kind: .histogram, help: "Latency.", unit: "seconds", histograms: [
            .init(labels: [("service", "Db")], bucketLabels: ["1e-06", "0.001", "+Inf"], bucketCounts: [2, 1, 0], sum: 0.5),
            // An `app` label before the last: the added label renames it on every bucket line.
            .init(labels: [("app", "inner"), ("path", "factory")], bucketLabels: ["1e-06", "+Inf"], bucketCounts: [1, 1], sum: 0.25),
        ]),
        .gauge("weave_up", "Up, with \\ and\na line feed.", [([], 1), ([("app", "inner")], -2.5e-3)]),
    ]
    static let hostileBytes = Array("{}\"\\=, #\n\t:_0aE+-.".utf8) + [0, 0xFF, 0xC3]
    static let hostileTokens = ["# TYPE weave_up gauge\n", "# EOF\n", "{", "}", "=\"", "\\", "\n", " 1 2 3", "NaN", "+Inf", "1e999",
                                "x_bucket{le=\"1\"} 1\n", "\u{0}", "# HELP \n", "app=\"x\","]

    /// `bytes` with a comment line before every other line: no line can then repeat the one before
    /// it, so the parser reads each line whole (its verdict and families must be the same).
    static func eachLineAlone(_ bytes: [UInt8]) -> [UInt8] {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var out: [UInt8] = []
        for (index, line) in lines.enumerated() {
            if let first = line.first, first != UInt8(ascii: "#") { out += Array("# -\n".utf8) }
            out += line
            if index < lines.count - 1 { out.append(UInt8(ascii: "\n")) }
        }
        return out
    }

    @Test func damagedExpositionsNeverCrashAndWhatIsAcceptedRendersValid() async {
        // Tens of seconds in a debug build: on a thread of its own, and what went wrong comes back as text.
        let (cases, accepted, failures) = await onThreadOfItsOwn(Self.attemptAll)
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        #expect(cases > 15_000 && accepted > 100, "\(cases) cases, \(accepted) accepted")
    }

    /// Every damaged exposition: how many there were, how many the parser accepted, and the failures.
    static func attemptAll() -> (cases: Int, accepted: Int, failures: [String]) {
        var cases = 0
        var accepted = 0
        var failures: [String] = []
        let samples = ProcessInfo.processInfo.environment["WEAVE_FUZZ_SAMPLES"]
        if let samples { try? FileManager.default.createDirectory(atPath: samples, withIntermediateDirectories: true) }
        // Another application, read as the daemon reads it, beside every accepted candidate.
        let other = (try? ExpositionParser.parse(Exposition.render(families, format: .openMetrics), adding: [("app", "billing")])) ?? []
        func attempt(_ candidate: [UInt8]) {
            cases += 1
            let text = String(decoding: candidate, as: UTF8.self)
            let parsed: [MetricFamily]
            // A line read in part because it repeats the one before must get the verdict it gets read whole.
            let alone = try? ExpositionParser.parse(eachLineAlone(candidate), adding: [("app", "orders")])
            do {
                parsed = try ExpositionParser.parse(candidate, adding: [("app", "orders")])
            } catch {
                if error.line < 1 { failures.append("rejected without a line number (\(error)):\n\(text)") }
                if alone != nil { failures.append("rejected only when lines repeat (\(error)):\n\(text)") }
                return
            }
            if alone != parsed { failures.append("read differently when lines repeat:\n\(text)") }
            accepted += 1
            for format in [Exposition.Format.prometheusText, .openMetrics] {
                let rendered = Exposition.render(parsed, format: format)
                let merged = Exposition.render(other + parsed, format: format)
                for output in [rendered, merged] {
                    do {
                        _ = try ExpositionParser.parse(output)
                    } catch {
                        failures.append("accepted input rendered invalid (\(error)):\n\(text)")
                    }
                }
                if let samples, accepted % 25 == 0 {
                    let name = "\(samples)/sample-\(accepted)." + (format == .openMetrics ? "om" : "txt")
                    FileManager.default.createFile(atPath: name, contents: Data(merged))
                }
            }
        }
        for format in [Exposition.Format.prometheusText, .openMetrics] {
            let bytes = Exposition.render(families, format: format)
            for length in 0...bytes.count { attempt(Array(bytes[..<length])) }
            for index in bytes.indices {
                for replacement in hostileBytes {
                    var candidate = bytes
                    candidate[index] = replacement
                    attempt(candidate)
                }
            }
            for index in stride(from: 0, through: bytes.count, by: 3) {
                for token in hostileTokens {
                    var candidate = bytes
                    candidate.insert(contentsOf: Array(token.utf8), at: index)
                    attempt(candidate)
                }
            }
        }
        return (cases, accepted, failures)
    }
}
