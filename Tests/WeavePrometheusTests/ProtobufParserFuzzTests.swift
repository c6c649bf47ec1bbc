import Testing
@testable import WeavePrometheus
import WeaveTestSupport

/// Damaged protobuf expositions, as a hostile or broken application could send them: every
/// truncation and every byte replaced by each hostile byte (deterministic, about 3,600 cases). The
/// parser must accept or reject with a reason, never crash; and whatever it accepts, relabelled and
/// rendered again as the daemon does, must parse back to the same families, or one application
/// could break a Prometheus's scrape of all.
@Suite struct ProtobufParserFuzzTests {
    static let families = ProtobufExpositionTests.families + [
        .gauge("weave_up", "Up, with \\ and\na line feed.", [([("app", "inner"), ("v", "\"q\"\n")], 1), ([], .nan)]),
    ]
    /// Bytes that change what a field is: a varint's continuation, wire types, zero, all ones.
    static let hostileBytes: [UInt8] = [0x00, 0x01, 0x02, 0x07, 0x08, 0x0a, 0x7f, 0x80, 0xff]

    @Test func damagedExpositionsNeverCrashAndWhatIsAcceptedRendersTheSame() async {
        // CPU-bound: on a thread of its own, off the cooperative pool the other suites' tasks need.
        let (cases, accepted, failures) = await onThreadOfItsOwn(Self.attemptAll)
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        #expect(cases > 3_000 && accepted > 100, "\(cases) cases, \(accepted) accepted")
    }

    /// Every damaged exposition: how many there were, how many the parser accepted, and the failures.
    static func attemptAll() -> (cases: Int, accepted: Int, failures: [String]) {
        let valid = ProtobufExposition.render(Self.families)
        var cases: [[UInt8]] = (0..<valid.count).map { Array(valid[..<$0]) }
        for index in valid.indices {
            for byte in Self.hostileBytes where byte != valid[index] {
                var damaged = valid
                damaged[index] = byte
                cases.append(damaged)
            }
        }
        var accepted = 0
        var failures: [String] = []
        for bytes in cases {
            guard let families = try? ProtobufParser.parse(bytes, adding: [("app", "orders")]) else { continue }
            accepted += 1
            do {
                // Compared as renderings: a NaN gauge is not equal to itself.
                let rendered = ProtobufExposition.render(families)
                if ProtobufExposition.render(try ProtobufParser.parse(rendered)) != rendered {
                    failures.append("accepted, rendered and read back other families: \(bytes)")
                }
            } catch {
                failures.append("accepted, but its rendering is refused (\(error)): \(bytes)")
            }
        }
        return (cases.count, accepted, failures)
    }
}
