import Testing
@testable import WeavePrometheus

/// The protobuf exposition: its bytes against the proto by hand, what survives a render and a parse,
/// the merge of two applications' native histograms, and what the parser refuses.
struct ProtobufExpositionTests {
    /// A latency histogram with classic buckets and a native histogram of schema 3.
    static let latency = MetricFamily(
        name: "latency_seconds", kind: .histogram, help: "Latency.", unit: "seconds",
        histograms: [.init(labels: [("path", "factory")], bucketLabels: ["0.0078125", "+Inf"], bucketCounts: [1, 5], sum: 0.26,
                           native: NativeHistogram(schema: 3, zeroThreshold: 0x1p-20, zeroCount: 1,
                                                   positive: [.init(index: -56, count: 0), .init(index: -34, count: 4), .init(index: -33, count: 1)]))])

    static let families = [
        MetricFamily.counter("requests", "Requests.", [([("code", "200")], 7)]),
        MetricFamily.gauge("temperature", "A gauge.", [([], -1.5)]),
        MetricFamily(name: "quantiles_seconds", kind: .summary, help: "A summary.", samples: [
            .init(labels: [("quantile", "0.5")], value: 0.05), .init(suffix: "_sum", value: 1), .init(suffix: "_count", value: 20),
        ]),
        latency,
    ]

    /// `MetricFamily { name: "g", help: "h", type: GAUGE, metric { label { name: "a", value: "b" } gauge { value: 1.5 } } }`,
    /// delimited, written out from the proto by hand.
    @Test func aGaugeIsTheBytesTheProtoSays() {
        let bytes = ProtobufExposition.render([.gauge("g", "h", [([("a", "b")], 1.5)])])
        let metric: [UInt8] = [0x0a, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, // label
                               0x12, 0x09, 0x09, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f] // gauge { value: 1.5 }
        let family: [UInt8] = [0x0a, 0x01, 0x67, 0x12, 0x01, 0x68, 0x18, 0x01, 0x22, UInt8(metric.count)] + metric
        #expect(bytes == [UInt8(family.count)] + family)
    }

    /// Native buckets as spans and deltas: bucket -56 (count 0), a gap of 21, then -34 and -33.
    @Test func nativeBucketsAreSpansAndDeltas() throws {
        let bytes = ProtobufExposition.render([Self.latency])
        // positive_span { offset: -56 (zigzag 111), length: 1 } and { offset: 21 (zigzag 42), length: 2 }.
        #expect(bytes.contains(subsequence: [0x62, 0x04, 0x08, 111, 0x10, 0x01]))
        #expect(bytes.contains(subsequence: [0x62, 0x04, 0x08, 42, 0x10, 0x02]))
        // positive_delta, packed: 0, +4, -3 (zigzag 0, 8, 5).
        #expect(bytes.contains(subsequence: [0x6a, 0x03, 0, 8, 5]))
        // schema: 3 (zigzag 6).
        #expect(bytes.contains(subsequence: [0x28, 0x06]))
    }

    @Test func whatIsRenderedParsesBackTheSame() throws {
        let parsed = try ProtobufParser.parse(ProtobufExposition.render(Self.families), adding: [("app", "orders")])
        #expect(parsed.map(\.name) == ["latency_seconds", "quantiles_seconds", "requests", "temperature"])
        let requests = parsed[2]
        #expect(requests.kind == .counter && requests.samples == [.init(suffix: "_total", labels: [("app", "orders"), ("code", "200")], value: 7)])
        #expect(parsed[3].samples == [.init(labels: [("app", "orders")], value: -1.5)])
        #expect(parsed[1].samples.map(\.value) == [0.05, 1, 20] && parsed[1].samples[0].labels.last! == ("quantile", "0.5"))
        let series = try #require(parsed[0].histograms.first)
        #expect(parsed[0].unit == "seconds" && parsed[0].help == "Latency.")
        #expect(series.bucketLabels == ["0.0078125", "+Inf"] && series.bucketCounts == [1, 5] && series.sum == 0.26)
        #expect(series.native == Self.latency.histograms[0].native)
        #expect(series.labels.map(\.0) == ["app", "path"])
    }

    /// Another registry's text (an application's swift-prometheus families, the textfile directory)
    /// is kept as preformatted lines; the protobuf exposition reads them back into its messages.
    @Test func preformattedLinesBecomeMessages() throws {
        let text = """
            # HELP orders_requests_total Requests.
            # TYPE orders_requests_total counter
            orders_requests_total{code="200"} 3
            # HELP queue_seconds Waits.
            # TYPE queue_seconds histogram
            queue_seconds_bucket{le="0.1"} 1
            queue_seconds_bucket{le="1"} 4
            queue_seconds_bucket{le="+Inf"} 5
            queue_seconds_sum 2.5
            queue_seconds_count 5
            # HELP rtt_seconds Round trips.
            # TYPE rtt_seconds summary
            rtt_seconds{quantile="0.5"} 0.02
            rtt_seconds_sum 1
            rtt_seconds_count 40

            """
        let families = try ExpositionParser.parse(Array(text.utf8), adding: [("app", "orders")])
        let parsed = try ProtobufParser.parse(ProtobufExposition.render(families))
        #expect(parsed.map(\.name) == ["orders_requests", "queue_seconds", "rtt_seconds"])
        #expect(parsed[0].samples == [.init(suffix: "_total", labels: [("app", "orders"), ("code", "200")], value: 3)])
        let queue = try #require(parsed[1].histograms.first)
        #expect(queue.bucketLabels == ["0.1", "1.0", "+Inf"] && queue.bucketCounts == [1, 3, 1] && queue.sum == 2.5 && queue.native == nil)
        #expect(parsed[2].samples.map(\.value) == [0.02, 1, 40])
    }

    /// The daemon's merge: two applications' native histograms of one family stay two series, each
    /// with its own buckets, in one family.
    @Test func twoApplicationsHistogramsStaySeparateSeries() throws {
        var other = Self.latency
        other.histograms[0].native!.positive = [.init(index: 10, count: 5)]
        other.histograms[0].native!.zeroCount = 0
        let orders = try ProtobufParser.parse(ProtobufExposition.render([Self.latency]), adding: [("app", "orders")])
        let billing = try ProtobufParser.parse(ProtobufExposition.render([other]), adding: [("app", "billing")])
        let merged = try ProtobufParser.parse(ProtobufExposition.render(orders + billing))
        #expect(merged.count == 1)
        let series = merged[0].histograms
        #expect(series.map { $0.labels[0].1 } == ["orders", "billing"])
        #expect(series[0].native == Self.latency.histograms[0].native && series[1].native == other.histograms[0].native)
    }

    /// A compact answer parses into more memory than its bytes: the parser takes room for its text
    /// size as it reads, and stops when refused.
    @Test func readingStopsWhenItsRoomIsRefused() throws {
        let bytes = ProtobufExposition.render([.gauge("g", "h", (0..<10_000).map { ([("i", "\($0)")], 1) })])
        var reserved = 0
        let parsed = try ProtobufParser.parse(bytes) { reserved += $0; return true }
        #expect(reserved == Exposition.estimatedSize(parsed) && reserved > bytes.count)
        var granted = 0
        do {
            _ = try ProtobufParser.parse(bytes) { size in
                guard granted + size <= 100_000 else { return false }
                granted += size
                return true
            }
            Issue.record("read past its room")
        } catch {
            #expect(error.outOfRoom && granted <= 100_000 && granted > 0)
        }
    }

    @Test func anApplicationsOwnAppLabelIsKeptAsExported() throws {
        let family = MetricFamily.gauge("g", "h", [([("app", "mine")], 1)])
        let parsed = try ProtobufParser.parse(ProtobufExposition.render([family]), adding: [("app", "orders")])
        #expect(parsed[0].samples[0].labels.map { "\($0.0)=\($0.1)" } == ["app=orders", "exported_app=mine"])
    }

    /// Hostile native histograms and wire bytes, each refused with its reason.
    @Test(arguments: [
        ("negative counts", histogram(spans: [(0, 2)], deltas: [3, -4]), "negative native bucket count"),
        ("spans that overlap", histogram(spans: [(0, 2), (-3, 1)], deltas: [1, 0, 0]), "overlap"),
        ("an unknown schema", histogram(schema: 9, spans: [(0, 1)], deltas: [1]), "schema 9"),
        ("spans longer than the deltas", histogram(spans: [(0, 3)], deltas: [1]), "longer than its deltas"),
        ("more deltas than spans", histogram(spans: [(0, 1)], deltas: [1, 1]), "native deltas for"),
        ("more in buckets than the count", histogram(count: 1, spans: [(0, 1)], deltas: [2]), "more than its count"),
        ("a float histogram", histogram(spans: [(0, 1)], deltas: [1], floatCount: true), "floats"),
        ("a cut message", Array(histogram(spans: [(0, 1)], deltas: [1]).dropLast(3)), "runs past"),
    ])
    func malformedNativeHistogramsAreRefused(_ what: String, _ bytes: [UInt8], _ reason: String) {
        do {
            _ = try ProtobufParser.parse(bytes)
            Issue.record("accepted: \(what)")
        } catch {
            #expect(error.description.contains(reason), "\(what): \(error)")
        }
    }

    @Test func invalidNamesTypesAndSeriesAreRefused() {
        let cases: [([MetricFamily], String)] = [
            ([.gauge("g", "h", [([("__name", "x")], 1)])], "begins with __"),
            ([.gauge("g", "h", [([("bad-label", "x")], 1)])], "not valid"),
            ([.gauge("1g", "h", [([], 1)])], "not a valid metric name"),
            ([.gauge("g", "h", [([("a", "1")], 1), ([("a", "1")], 2)])], "a series twice"),
            ([.counter("c", "h", [([], -1)])], "counter c_total has the value -1"),
            ([MetricFamily(name: "h", kind: .histogram, help: "h", histograms: [.init(labels: [("le", "1")], bucketLabels: ["+Inf"], bucketCounts: [1], sum: 1)])], "reserves"),
        ]
        for (families, reason) in cases {
            do {
                _ = try ProtobufParser.parse(ProtobufExposition.render(families))
                Issue.record("accepted: \(reason)")
            } catch {
                #expect(error.description.contains(reason), "\(error)")
            }
        }
        // A name of 3 MB is shown by its first 200 bytes in the reason (a log line).
        let long = String(repeating: "a", count: 3_000_000)
        do {
            _ = try ProtobufParser.parse(ProtobufExposition.render([.gauge(long, "h", [([], 1), ([], 2)])]))
            Issue.record("accepted a series twice")
        } catch {
            #expect(error.description.contains("a series twice") && error.description.utf8.count < 300)
        }
        var untyped = ProtobufWire.Writer()
        untyped.message(nil) { $0.string(1, "u"); $0.uint64(3, 3) }
        #expect(throws: ProtobufParser.Failure.self) { try ProtobufParser.parse(untyped.bytes) }
    }

    /// What Prometheus 2.42 sends with and without `--enable-feature=native-histograms`, and others.
    @Test func theAcceptHeaderChoosesTheFormat() {
        let native = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        let classic = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        #expect(Exposition.Format.negotiate(accept: native) == .protobuf)
        #expect(Exposition.Format.negotiate(accept: classic) == .openMetrics)
        #expect(Exposition.Format.negotiate(accept: "text/plain") == .prometheusText)
        #expect(Exposition.Format.negotiate(accept: nil) == .prometheusText)
        #expect(Exposition.Format.negotiate(accept: "application/vnd.google.protobuf;encoding=text") == .prometheusText)
        #expect(Exposition.Format.negotiate(accept: "application/openmetrics-text;q=0.2,text/plain;q=0.9") == .prometheusText)
    }

    /// The text formats show what they can: a native-only series is its `+Inf` bucket, sum and count.
    @Test func theTextFormatShowsTheClassicBuckets() {
        var family = Self.latency
        family.histograms[0].bucketLabels = ["+Inf"]
        family.histograms[0].bucketCounts = [6]
        let text = String(decoding: Exposition.render([family], format: .prometheusText), as: UTF8.self)
        #expect(text.contains("latency_seconds_bucket{path=\"factory\",le=\"+Inf\"} 6\nlatency_seconds_sum{path=\"factory\"} 0.26\nlatency_seconds_count{path=\"factory\"} 6\n"))
    }
}

/// A histogram family of one series whose native part is `spans` and `deltas`, as an application might send it.
func histogram(schema: Int64 = 3, count: UInt64 = 10, spans: [(Int64, UInt64)], deltas: [Int64], floatCount: Bool = false) -> [UInt8] {
    var out = ProtobufWire.Writer()
    out.message(nil) { family in
        family.string(1, "h_seconds")
        family.uint64(3, 4)
        family.message(4) { metric in
            metric.message(7) { histogram in
                histogram.uint64(1, count)
                histogram.double(2, 1)
                if floatCount { histogram.double(4, 10) }
                histogram.sint(5, schema)
                histogram.double(6, 0x1p-20)
                for (offset, length) in spans { histogram.message(12) { $0.sint(1, offset); $0.uint64(2, length) } }
                histogram.message(13) { packed in for delta in deltas { packed.varint(ProtobufWire.zigzag(delta)) } }
            }
        }
    }
    return out.bytes
}

private extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<$0 + subsequence.count]) == subsequence }
    }
}
