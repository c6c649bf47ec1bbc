import Foundation
import Testing
@testable import WeavePrometheus

@Suite struct ExpositionParserTests {
    let families: [MetricFamily] = [
        .counter("weave_resolutions", "Resolves.", [([("service", "Database")], 3), ([("service", "a\"b\\c\nd")], 1)]),
        MetricFamily(name: "weave_resolve_duration_seconds", kind: .histogram, help: "Latency.", unit: "seconds", histograms: [
            .init(labels: [("service", "Database")], bucketLabels: ["0.001", "+Inf"], bucketCounts: [2, 1], sum: 0.5),
        ]),
        .gauge("weave_up", "Help with a \\ backslash\nand a line feed.", [([], 1)]),
    ]

    @Test func readsBothFormatsBackRelabelled() throws {
        for format in [Exposition.Format.prometheusText, .openMetrics] {
            let parsed = try ExpositionParser.parse(Exposition.render(families, format: format), adding: [("app", "orders")])
            #expect(parsed.map(\.name) == ["weave_resolutions", "weave_resolve_duration_seconds", "weave_up"])
            #expect(parsed.map(\.kind) == [.counter, .histogram, .gauge])
            #expect(parsed[2].help == "Help with a \\ backslash\nand a line feed.")
            #expect(format == .prometheusText || parsed[1].unit == "seconds")
            let lines = String(decoding: parsed[0].preformatted, as: UTF8.self)
            #expect(lines == "weave_resolutions_total{app=\"orders\",service=\"Database\"} 3\n"
                + "weave_resolutions_total{app=\"orders\",service=\"a\\\"b\\\\c\\nd\"} 1\n")
            #expect(String(decoding: parsed[2].preformatted, as: UTF8.self) == "weave_up{app=\"orders\"} 1\n")
            // Rendered again in either format, the exposition is the original plus the label.
            for output in [Exposition.Format.prometheusText, .openMetrics] {
                let again = String(decoding: Exposition.render(parsed, format: output), as: UTF8.self)
                let original = String(decoding: Exposition.render(families, format: output), as: UTF8.self)
                #expect(again.replacingOccurrences(of: "app=\"orders\",", with: "").replacingOccurrences(of: "{app=\"orders\"}", with: "")
                    == original.replacingOccurrences(of: "# UNIT weave_resolve_duration_seconds seconds\n", with: format == .prometheusText ? "" : "# UNIT weave_resolve_duration_seconds seconds\n"))
            }
        }
    }

    @Test func renderedInPiecesIsTheSameExposition() throws {
        // Families rendered here and parsed ones (preformatted lines), merged by name across both.
        let parsed = try ExpositionParser.parse(Exposition.render(families, format: .openMetrics), adding: [("app", "orders")])
        let merged = families + parsed
        for format in [Exposition.Format.prometheusText, .openMetrics] {
            let whole = Exposition.render(merged, format: format)
            for chunkSize in [1, 64, 300, 1 << 16] {
                var pieces: [[UInt8]] = []
                Exposition.render(merged, format: format, chunkSize: chunkSize) { pieces.append(Array($0)) }
                #expect(pieces.flatMap { $0 } == whole)
                // Split where it is smaller than the exposition; one piece when it is not.
                #expect(chunkSize < whole.count ? pieces.count > 2 : pieces.count == 1)
            }
        }
    }

    @Test func anExistingLabelOfTheSameNameIsExported() throws {
        let parsed = try ExpositionParser.parse(Array("# TYPE x gauge\nx{app=\"inner\",b=\"1\"} 2 1700000000000\n".utf8), adding: [("app", "outer")])
        #expect(String(decoding: parsed[0].preformatted, as: UTF8.self) == "x{app=\"outer\",exported_app=\"inner\",b=\"1\"} 2\n")
        let escaped = #"x{a="q\"uote\\",app="in"} 4"# + "\n" + "x{} 3\n" + #"x{a="\\"} 5 # {trace="1"} 1"# + "\n"
        let again = try ExpositionParser.parse(Array(("# TYPE x gauge\n" + escaped).utf8), adding: [("app", "outer")])
        #expect(String(decoding: again[0].preformatted, as: UTF8.self)
            == #"x{app="outer",a="q\"uote\\",exported_app="in"} 4"# + "\n" + #"x{app="outer"} 3"# + "\n"
            + #"x{app="outer",a="\\"} 5"# + "\n")
        // The most a line can grow: every label renamed.
        let names = (0..<200).map { "a\($0)" }
        let crowded = "# TYPE x gauge\nx{" + names.map { "\($0)=\"\"" }.joined(separator: ",") + "} 1\n"
        let renamed = try ExpositionParser.parse(Array(crowded.utf8), adding: names.map { ($0, "outer") }, limits: ParseLimits(labels: 200))
        #expect(String(decoding: renamed[0].preformatted, as: UTF8.self)
            == "x{" + names.map { "\($0)=\"outer\"" }.joined(separator: ",") + ","
            + names.map { "exported_\($0)=\"\"" }.joined(separator: ",") + "} 1\n")
        let bare = try ExpositionParser.parse(Array("# TYPE x gauge\nx{a=\"1\"} 2 17\n".utf8))
        #expect(String(decoding: bare[0].preformatted, as: UTF8.self) == "x{a=\"1\"} 2\n")
    }

    @Test func rejectsWhatIsNotAnExposition() {
        let cases: [(String, Int)] = [
            ("HTTP/1.1 200 OK\r\n", 1),
            ("# TYPE x gauge\nx 1\ny 2\n", 3),
            ("x 1\n", 1),
            ("# TYPE x gauge\nx{a=\"1} 2\n", 2),
            ("# TYPE x gauge\nx{a=1} 2\n", 2),
            ("# TYPE x gauge\nx one\n", 2),
            ("# TYPE x gauge\n# TYPE x gauge\n", 2),
            ("# TYPE x stateset\n", 1),
            ("# TYPE x gauge\nx 1\n# EOF\nx 2\n", 4),
            ("# TYPE x gauge\nx{a=\"\\q\"} 1\n", 2),
            ("# TYPE x gauge\nx_bucket 1\n", 2),
            // What a Prometheus server would reject in the merged exposition (a whole scrape lost).
            ("# TYPE x gauge\nx{a=\"1\",a=\"2\"} 1\n", 2),
            ("# TYPE x gauge\nx{a=\"1\",b=\"2\"} 1\nx{a=\"1\",b=\"2\",a=\"3\"} 1\n", 3),
            ("# TYPE x gauge\nx{__name__=\"y\"} 1\n", 2),
            ("# TYPE x gauge\nx{__meta_x=\"1\"} 1\n", 2),
            ("# TYPE x_seconds gauge\n# UNIT x_seconds bytes\n", 2),
            ("# UNIT x_seconds milliseconds\n# TYPE x_seconds gauge\n", 1),
            ("# TYPE x gauge\nx 1e400\n", 2),
            ("# TYPE x gauge\nx -1.5E+309\n", 2),
            ("# TYPE x gauge\nx 1\nx " + String(repeating: "9", count: 5_000) + "\n", 3),
        ]
        for (text, line) in cases {
            #expect(throws: ExpositionParser.Failure.self, "\(text)") { try ExpositionParser.parse(Array(text.utf8)) }
            do {
                _ = try ExpositionParser.parse(Array(text.utf8))
            } catch {
                #expect(error.line == line, "\(text): \(error)")
            }
        }
    }

    /// The rules across a family's lines, which promtool, the OpenMetrics parser and Prometheus hold
    /// the merged exposition to: each case is rejected at its line, with the rule.
    @Test(arguments: [
        ("# TYPE h histogram\nh_bucket{le=\"abc\"} 1\n", 2, "is not a number"),
        ("# TYPE h histogram\nh_bucket 1\n", 2, "without le"),
        ("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n", 3, "below the one before"),
        ("# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\n", 3, "increasing le"),
        ("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n# TYPE g gauge\n", 5, "without its +Inf"),
        ("# TYPE h histogram\nh_bucket{le=\"1\"} 1\n", 2, "without its +Inf"),
        ("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 3\nh_sum 1\nh_count 2\n", 4, "is not the +Inf bucket's count"),
        ("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 3\nh_sum 1\n", 3, "must come together"),
        ("# TYPE h histogram\nh_bucket{le=\"inf\"} 3\n", 2, "spelled +Inf"),
        ("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1.5\n", 2, "not a whole number"),
        ("# TYPE h histogram\nh_bucket{le=\"+Inf\"} -1\n", 2, "negative"),
        ("# TYPE h histogram\nh_bucket{p=\"a\",le=\"+Inf\"} 1\nh_bucket{p=\"b\",le=\"+Inf\"} 1\nh_bucket{p=\"a\",le=\"+Inf\"} 1\n", 4,
         "not together"),
        ("# TYPE s summary\ns{quantile=\"x\"} 1\n", 2, "from 0 to 1"),
        ("# TYPE s summary\ns{quantile=\"1.5\"} 1\n", 2, "from 0 to 1"),
        ("# TYPE s summary\ns 1\n", 2, "without quantile"),
        ("# TYPE s summary\ns{quantile=\"0.5\"} -1\n", 2, "negative"),
        ("# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"1\"} 2\n", 3, "appears twice"),
        ("# TYPE g gauge\ng{a=\"1\",b=\"2\"} 1\ng{c=\"3\"} 1\ng{b=\"2\",a=\"1\"} 2\n", 4, "appears twice"),
        ("# TYPE c counter\nc_total -1\n", 2, "negative"),
        ("# TYPE c counter\nc_total NaN\n", 2, "negative or NaN"),
    ])
    func rejectsWhatBreaksASeries(text: String, line: Int, words: String) {
        do {
            _ = try ExpositionParser.parse(Array(text.utf8))
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line && error.message.contains(words), "\(error)")
        }
    }

    /// What the rules allow: series of a histogram in any label order, `le` anywhere in the labels,
    /// a histogram series of `+Inf` alone, a summary's quantiles with NaN, gauges with any value.
    @Test func acceptsWhatTheSeriesRulesAllow() throws {
        let text = """
            # TYPE h histogram
            h_bucket{le="0.5",p="a"} 1
            h_bucket{le="1",p="a"} 1
            h_bucket{le="+Inf",p="a"} 2
            h_sum{p="a"} 3.5
            h_count{p="a"} 2
            h_bucket{p="b",le="+Inf"} 0
            h_bucket{p="c",le="1e-06"} 0
            h_bucket{p="c",le="1.2e-06"} 4
            h_bucket{p="c",le="+Inf"} 4
            # TYPE s summary
            s{quantile="0.5"} NaN
            s{quantile="0.99"} 2
            s_sum 7
            s_count 3
            # TYPE g gauge
            g{a="1"} -3
            g{a="2"} NaN
            g{b="1",a="1"} 1

            """
        #expect(try ExpositionParser.parse(Array(text.utf8)).map(\.name) == ["h", "s", "g"])
    }

    /// Bytes that are not UTF-8 anywhere (a label value, HELP) reject the answer, with the line.
    @Test func rejectsWhatIsNotUTF8() {
        let valid = Array("# HELP x Grüße ✓ 𝄞\n# TYPE x gauge\nx{a=\"日本\"} 1\n".utf8)
        #expect(throws: Never.self) { try ExpositionParser.parse(valid) }
        let invalid: [([UInt8], Int)] = [
            (Array("# TYPE x gauge\nx{a=\"".utf8) + [0xFF] + Array("\"} 1\n".utf8), 2),
            (Array("# HELP x ".utf8) + [0xC0, 0xAF] + Array("\n# TYPE x gauge\n".utf8), 1), // overlong '/'
            (Array("# TYPE x gauge\nx 1\nx{a=\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"} 1\n".utf8), 3), // a surrogate
            (Array("# TYPE x gauge\nx{a=\"".utf8) + [0xE6, 0x97] + Array("\"} 1\n".utf8), 2), // cut short
            (Array("# TYPE x gauge\nx{a=\"".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("\"} 1\n".utf8), 2), // above U+10FFFF
        ]
        for (bytes, line) in invalid {
            do {
                _ = try ExpositionParser.parse(bytes)
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.line == line && error.message.contains("UTF-8"), "\(error)")
            }
        }
    }

    /// Values Prometheus reads as float64 pass, whatever their spelling; the limits are float64's.
    @Test func valuesWithinFloat64Pass() throws {
        let values = ["1e308", "-1.7976931348623157e308", "1e-400", "123456789012345678901234567890", "+Inf", "-Inf", "NaN", ".5"]
        let text = "# TYPE x gauge\n" + values.enumerated().map { "x{i=\"\($0.offset)\"} \($0.element)" }.joined(separator: "\n") + "\n"
        #expect(try ExpositionParser.parse(Array(text.utf8))[0].preformatted.count > 0)
    }

    /// A line's own `exported_app` and its `app` together: the daemon's `app` goes first, the line's
    /// `app` becomes `exported_exported_app` (`exported_` repeated until unique), nothing is lost.
    @Test func exportedRepeatsUntilTheNameIsUnique() throws {
        let text = "# TYPE x gauge\nx{app=\"in\",exported_app=\"e\"} 1\nx{app=\"in\",exported_app=\"f\"} 2\n"
        let parsed = try ExpositionParser.parse(Array(text.utf8), adding: [("app", "orders")])
        #expect(String(decoding: parsed[0].preformatted, as: UTF8.self)
            == "x{app=\"orders\",exported_exported_app=\"in\",exported_app=\"e\"} 1\n"
            + "x{app=\"orders\",exported_exported_app=\"in\",exported_app=\"f\"} 2\n")
    }

    /// A counter sample named as its family (text 0.0.4 allows it) gets `_total`, so the merged
    /// exposition is valid OpenMetrics as well as text.
    @Test func aCounterSampleWithoutTotalGetsIt() throws {
        let text = "# TYPE c counter\nc{a=\"1\"} 3\nc{a=\"2\"} 4\nc 5\nc_created 1700000000\n"
        for adding in [[], [("app", "orders")]] {
            let parsed = try ExpositionParser.parse(Array(text.utf8), adding: adding)
            let prefix = adding.isEmpty ? "" : "app=\"orders\","
            #expect(String(decoding: parsed[0].preformatted, as: UTF8.self)
                == "c_total{\(prefix)a=\"1\"} 3\nc_total{\(prefix)a=\"2\"} 4\nc_total\(adding.isEmpty ? "" : "{app=\"orders\"}") 5\n")
            let openMetrics = String(decoding: Exposition.render(parsed, format: .openMetrics), as: UTF8.self)
            #expect(openMetrics.contains("# TYPE c counter\n") && !openMetrics.contains("\nc{") && !openMetrics.contains("\nc "))
        }
    }

    @Test func aLineThatRepeatsTheLastOneIsReadAsAWholeLineWouldBe() throws {
        // Each line repeats the one before up to its last label's value, with an added label, an
        // extra one, a trailing comma, or another last label; read alone, each gives the same.
        let lines = ["x{a=\"1\",app=\"in\"} 1", "x{a=\"1\",app=\"in2\"} 2", "x{a=\"1\",app=\"in2\",b=\"3\"} 3",
                     "x{a=\"1\",app=\"in3\",} 4", "x{a=\"1\",c=\"5\"} 5", "x{a=\"2\"} 6", "x{a=\"3\"} 7 1700000000"]
        let expected = "x{app=\"orders\",a=\"1\",exported_app=\"in\"} 1\nx{app=\"orders\",a=\"1\",exported_app=\"in2\"} 2\n"
            + "x{app=\"orders\",a=\"1\",exported_app=\"in2\",b=\"3\"} 3\nx{app=\"orders\",a=\"1\",exported_app=\"in3\"} 4\n"
            + "x{app=\"orders\",a=\"1\",c=\"5\"} 5\nx{app=\"orders\",a=\"2\"} 6\nx{app=\"orders\",a=\"3\"} 7\n"
        for separator in ["\n", "\n# -\n"] {
            let text = "# TYPE x gauge\n" + lines.joined(separator: separator) + "\n"
            let parsed = try ExpositionParser.parse(Array(text.utf8), adding: [("app", "orders")])
            #expect(String(decoding: parsed[0].preformatted, as: UTF8.self) == expected)
        }
        #expect(throws: ExpositionParser.Failure.self) {
            try ExpositionParser.parse(Array("# TYPE x gauge\nx{a=\"1\",b=\"2\"} 1\nx{a=\"1\",b=\"2\"x} 1\n".utf8))
        }
    }

    @Test func familiesOfOneNameRenderAsOne() {
        let a = MetricFamily.gauge("up", "Up.", [([("app", "a")], 1)])
        var b = MetricFamily.gauge("up", "Other help.", [])
        b.preformatted = PreformattedLines(Array("up{app=\"b\"} 0\n".utf8))
        let counter = MetricFamily.counter("up", "A counter of the same name.", [([("app", "c")], 5)])
        let text = String(decoding: Exposition.render([b, counter, a], format: .prometheusText), as: UTF8.self)
        #expect(text == "# HELP up Other help.\n# TYPE up gauge\nup{app=\"b\"} 0\nup{app=\"a\"} 1\n")
    }

    /// The lines the parser accepted decode back to names, unescaped labels and values.
    @Test func acceptedLinesDecodeToSamples() throws {
        let text = """
            # TYPE weave_x counter
            weave_x_total{dependency="a \\\"b\\\" \\\\ c\\nd",kind="x"} 3 1700000000000
            weave_x_total 1e3
            # TYPE weave_h histogram
            weave_h_bucket{le="+Inf"} 2
            weave_h_sum 0.5
            weave_h_count 2

            """
        let families = try ExpositionParser.parse(Array(text.utf8), adding: [("app", "orders")])
        #expect(families.flatMap(\.preformatted.samples) == [
            ExpositionSample(name: "weave_x_total", labels: ["app": "orders", "dependency": "a \"b\" \\ c\nd", "kind": "x"], value: 3),
            ExpositionSample(name: "weave_x_total", labels: ["app": "orders"], value: 1_000),
            ExpositionSample(name: "weave_h_bucket", labels: ["app": "orders", "le": "+Inf"], value: 2),
            ExpositionSample(name: "weave_h_sum", labels: ["app": "orders"], value: 0.5),
            ExpositionSample(name: "weave_h_count", labels: ["app": "orders"], value: 2),
        ])
    }

    /// Lines made without the parser are decoded within their bytes: a line cut anywhere is skipped.
    @Test func linesCutShortDecodeToNothing() {
        let line = Array("weave_x_total{a=\"1\",b=\"x\\\"y\"} 7\n".utf8)
        #expect(PreformattedLines(line).samples == [ExpositionSample(name: "weave_x_total", labels: ["a": "1", "b": "x\"y"], value: 7)])
        for length in 1..<(line.count - 2) {
            #expect(PreformattedLines(Array(line[..<length]) + [UInt8(ascii: "\n")]).samples.isEmpty, "cut at \(length)")
        }
    }
}
