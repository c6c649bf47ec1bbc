import Testing
@testable import WeavePrometheus

@Suite struct ExpositionTests {
    private let families: [MetricFamily] = [
        .gauge("b_gauge", "A gauge.", [([("service", "x\"y\\z\nw")], 1.5)]),
        .counter("a_things", "Things\\counted\nso far.", [([("service", "s")], 3)]),
        .gauge("weave_build_info", "Build.", [([("version", "1")], 1)]),
        .gauge("c_seconds", "Seconds.", unit: "seconds", [([], .infinity)]),
    ]

    @Test func prometheusTextIsSortedEscapedAndTyped() {
        let text = String(decoding: Exposition.render(families, format: .prometheusText), as: UTF8.self)
        #expect(text == """
            # HELP a_things_total Things\\\\counted\\nso far.
            # TYPE a_things_total counter
            a_things_total{service="s"} 3
            # HELP b_gauge A gauge.
            # TYPE b_gauge gauge
            b_gauge{service="x\\"y\\\\z\\nw"} 1.5
            # HELP c_seconds Seconds.
            # TYPE c_seconds gauge
            c_seconds +Inf
            # HELP weave_build_info Build.
            # TYPE weave_build_info gauge
            weave_build_info{version="1"} 1

            """)
    }

    @Test func helpWithCarriageReturnLineFeedStaysOnItsLine() throws {
        // "\r\n" is one Character: its line feed must be escaped all the same, or the exposition breaks.
        let family = MetricFamily.gauge("crlf", "First line\r\nsecond \\ line.", [([], 1)])
        for format in [Exposition.Format.prometheusText, .openMetrics] {
            let rendered = Exposition.render([family], format: format)
            #expect(String(decoding: rendered, as: UTF8.self).hasPrefix("# HELP crlf First line\r\\nsecond \\\\ line.\n# TYPE"))
            #expect(try ExpositionParser.parse(rendered).first?.help == family.help)
        }
    }

    @Test func openMetricsHasUnitsInfoAndEOF() {
        let text = String(decoding: Exposition.render(families, format: .openMetrics), as: UTF8.self)
        #expect(text.contains("# TYPE a_things counter\na_things_total{service=\"s\"} 3\n"))
        #expect(text.contains("# TYPE c_seconds gauge\n# UNIT c_seconds seconds\n"))
        #expect(text.contains("# TYPE weave_build_info gauge\nweave_build_info{version=\"1\"} 1\n"))
        #expect(text.hasSuffix("# EOF\n"))
    }

    @Test func histogramSeriesAreCumulativeWithSumAndCount() {
        let bounds = ["0.1", "1.0", "+Inf"]
        let family = MetricFamily(name: "h_seconds", kind: .histogram, help: "H.", unit: "seconds", histograms: [
            .init(labels: [("service", "a\"b")], bucketLabels: bounds, bucketCounts: [1, 2, 3], sum: 4.5),
            .init(labels: [("service", "c"), ("path", "p")], bucketLabels: bounds, bucketCounts: [0, 0, 1], sum: 20),
            .init(labels: [], bucketLabels: ["5", "+Inf"], bucketCounts: [2, 0], sum: 0.25),
        ])
        #expect(String(decoding: Exposition.render([family], format: .prometheusText), as: UTF8.self) == """
            # HELP h_seconds H.
            # TYPE h_seconds histogram
            h_seconds_bucket{service="a\\"b",le="0.1"} 1
            h_seconds_bucket{service="a\\"b",le="1.0"} 3
            h_seconds_bucket{service="a\\"b",le="+Inf"} 6
            h_seconds_sum{service="a\\"b"} 4.5
            h_seconds_count{service="a\\"b"} 6
            h_seconds_bucket{service="c",path="p",le="0.1"} 0
            h_seconds_bucket{service="c",path="p",le="1.0"} 0
            h_seconds_bucket{service="c",path="p",le="+Inf"} 1
            h_seconds_sum{service="c",path="p"} 20
            h_seconds_count{service="c",path="p"} 1
            h_seconds_bucket{le="5"} 2
            h_seconds_bucket{le="+Inf"} 2
            h_seconds_sum 0.25
            h_seconds_count 2

            """)
    }

    @Test func acceptNegotiation() {
        #expect(Exposition.Format.negotiate(accept: nil) == .prometheusText)
        #expect(Exposition.Format.negotiate(accept: "text/plain") == .prometheusText)
        #expect(Exposition.Format.negotiate(
            accept: "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") == .openMetrics)
        #expect(Exposition.Format.negotiate(accept: "application/openmetrics-text;q=0, text/plain") == .prometheusText)
    }

    @Test func processFamiliesAreRead() {
        let names = Set(ProcessMetrics.families().map(\.name))
        #expect(names.isSuperset(of: ["process_cpu_seconds", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
                                      "process_start_time_seconds", "process_virtual_memory_bytes"]))
    }

    @Test func namesAreSanitized() {
        #expect(Exposition.sanitizeName("disk-root.free%") == "disk_root_free_")
        #expect(Exposition.sanitizeName("9lives") == "_lives")
    }
}
