import Testing
@testable import WeavePrometheus

/// Round 4's attacks on the parsers of other processes' answers: nothing an answer holds makes a
/// parse run away in time or memory.
@Suite struct ParseLimitsTests {
    /// One series with 100,000 labels (1.2 MB): refused at the 129th label, in either format, long
    /// before it could be compared pairwise (that took seconds; `attacks.sh` (f) times the daemon
    /// scraping such an application).
    @Test func aSeriesOfManyLabelsIsRefusedAtTheLimit() throws {
        let labels = (0..<100_000).map { ("l\($0)", "") }
        let text = "# TYPE x gauge\nx{" + labels.map { "\($0.0)=\"\"" }.joined(separator: ",") + "} 1\n"
        do {
            _ = try ExpositionParser.parse(Array(text.utf8), adding: [("app", "a")])
            Issue.record("accepted 100,000 labels")
        } catch {
            #expect(error.line == 2 && error.message == "a series has more than 128 labels (label_limit)")
        }
        do {
            _ = try ProtobufParser.parse(ProtobufExposition.render([.gauge("x", "h", [(labels, 1)])]))
            Issue.record("accepted 100,000 labels")
        } catch {
            #expect(error.reason.contains("more than 128 labels (label_limit)"), "\(error)")
        }
        // 128 are accepted, and a duplicate among many is still found (through the hash table).
        let most = (0..<128).map { "l\($0)=\"\"" }
        #expect(try ExpositionParser.parse(Array(("# TYPE x gauge\nx{" + most.joined(separator: ",") + "} 1\n").utf8)).count == 1)
        let twice = most.prefix(100) + ["l57=\"\""]
        #expect(throws: ExpositionParser.Failure.self) {
            try ExpositionParser.parse(Array(("# TYPE x gauge\nx{" + twice.joined(separator: ",") + "} 1\n").utf8))
        }
        let protobufTwice = (0..<100).map { ("l\($0)", "") } + [("l57", "")]
        #expect(throws: ProtobufParser.Failure.self) {
            try ProtobufParser.parse(ProtobufExposition.render([.gauge("x", "h", [(protobufTwice, 1)])]))
        }
        #expect(throws: ExpositionParser.Failure.self) {
            try ExpositionParser.parse(Array("# TYPE x gauge\nx{a=\"\",b=\"\"} 1\n".utf8), limits: ParseLimits(labels: 1))
        }
    }

    /// Lines, with every label name distinct, that each have many labels (40,000 labels in 1 MB)
    /// are read whole. (Whether the time grows with the bytes, not with the square of the labels, is
    /// a timing: no unit test times the machine it runs on.)
    @Test func manyLabelsOnManyLinesAreRead() throws {
        let line = (0..<100).map { "label_\($0)=\"v\"" }.joined(separator: ",")
        let text = "# TYPE x gauge\n" + (0..<400).map { "x{i=\"\($0)\",\(line)} 1\n" }.joined()
        let parsed = try ExpositionParser.parse(Array(text.utf8), adding: [("app", "a")])
        #expect(parsed[0].preformatted.samples.count == 400)
    }

    @Test func samplesPastTheLimitAreRefused() {
        let text = "# TYPE x gauge\n" + (0..<11).map { "x{i=\"\($0)\"} 1\n" }.joined()
        do {
            _ = try ExpositionParser.parse(Array(text.utf8), limits: ParseLimits(samples: 10))
            Issue.record("accepted 11 samples")
        } catch {
            #expect(error.line == 12 && error.message == "more than 10 samples (sample_limit)")
        }
        let histogram = MetricFamily(name: "h", kind: .histogram, help: "h",
                                     histograms: [.init(labels: [], bucketLabels: ["1", "+Inf"], bucketCounts: [1, 1], sum: 1)])
        // Buckets, _sum and _count count: 4 samples.
        #expect(throws: ProtobufParser.Failure.self) {
            try ProtobufParser.parse(ProtobufExposition.render([histogram]), limits: ParseLimits(samples: 3))
        }
        #expect((try? ProtobufParser.parse(ProtobufExposition.render([histogram]), limits: ParseLimits(samples: 4))) != nil)
    }

    /// A deadline already past stops a long answer (checked every 1,024 lines, or every metric).
    @Test func aPastDeadlineStopsTheParse() {
        let text = "# TYPE x gauge\n" + (0..<5_000).map { "x{i=\"\($0)\"} 1\n" }.joined()
        let late = ParseLimits(deadline: ContinuousClock.now)
        do {
            _ = try ExpositionParser.parse(Array(text.utf8), limits: late)
            Issue.record("a parse past its deadline went on")
        } catch {
            #expect(error.line == 1_024 && error.message == ParseLimits.lateMessage)
        }
        #expect(throws: ProtobufParser.Failure.self) {
            try ProtobufParser.parse(ProtobufExposition.render([.gauge("x", "h", [([], 1)])]), limits: late)
        }
    }

    /// One native histogram of 4,000,000 one-byte deltas (a 4 MB answer): room for its deltas and
    /// buckets is asked before they are decoded, so a refusal stops it having built nothing of them.
    @Test func nativeDeltasAreCountedBeforeTheyAreDecoded() throws {
        let bytes = histogram(count: 0, spans: [(0, 4_000_000)], deltas: Array(repeating: 0, count: 4_000_000))
        var asked: [Int] = []
        do {
            _ = try ProtobufParser.parse(bytes) { size in
                asked.append(size)
                return size < 1 << 20
            }
            Issue.record("accepted 4,000,000 deltas within 1 MiB")
        } catch {
            #expect(error.outOfRoom)
        }
        // The refused step is the deltas' whole room (24 bytes each), asked at once.
        #expect((asked.last ?? 0) >= 4_000_000 * 24)
    }

    @Test func theProtobufContentTypeIsComparedWhole() {
        #expect(ProtobufExposition.names(ProtobufExposition.contentType) == true)
        #expect(ProtobufExposition.names("application/vnd.google.protobuf;proto=\"io.prometheus.client.MetricFamily\"; Encoding=delimited") == true)
        #expect(ProtobufExposition.names("application/vnd.google.protobuf; proto=io.prometheus.client.Nope; encoding=delimited") == false)
        #expect(ProtobufExposition.names("application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamilyX; encoding=delimited") == false)
        #expect(ProtobufExposition.names("application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=text") == false)
        #expect(ProtobufExposition.names("application/openmetrics-text; version=1.0.0") == nil)
    }
}
