import Testing
@testable import weave_health
import WeaveHealth
import WeavePrometheus
import WeaveReaders
import WeaveSupport
import WeaveTestSupport

@Suite struct ProbeTests {
    @Test func targets() {
        #expect(ProbeTarget(url: "http://127.0.0.1:9096") == .tcp(host: "127.0.0.1", port: 9096))
        #expect(ProbeTarget(url: "http://[::1]:9096/health") == .tcp(host: "::1", port: 9096))
        #expect(ProbeTarget(url: "http://localhost") == .tcp(host: "localhost", port: 80))
        #expect(ProbeTarget(url: "unix:/run/weave-healthd/health.sock") == .unix(path: "/run/weave-healthd/health.sock"))
        #expect(ProbeTarget(url: "https://example.com") == nil)
        #expect(ProbeTarget(url: "http://host:99999") == nil)
        // The Host header always carries the port, IPv6 in brackets (never a bare ":port").
        #expect(ProbeTarget.tcp(host: "::1", port: 9096).hostHeader == "[::1]:9096")
        #expect(ProbeTarget.tcp(host: "127.0.0.1", port: 80).hostHeader == "127.0.0.1:80")
    }

    @Test func targetFromTheDaemonsConfiguration() throws {
        let config = """
            # weave-healthd
            details: always
            listen:
              - address: 127.0.0.1:9200   # metrics
              - unix: /run/x.sock
            checks: []
            """
        #expect(try ProbeTarget.fromDaemonConfiguration(config) == .tcp(host: "127.0.0.1", port: 9200))
        #expect(try ProbeTarget.fromDaemonConfiguration("listen:\n  - {unix: \"/run/h.sock\", mode: \"0600\"}\n") == .unix(path: "/run/h.sock"))
        #expect(try ProbeTarget.fromDaemonConfiguration("checks: []\n") == .daemonDefault)
    }

    @Test func options() throws {
        let several = try ProbeOptions(["--check", "a", "--check=b", "--timeout", "500ms", "--connect-timeout", "0.2"])
        #expect(several.mode == .checks(["a", "b"]))
        #expect(several.timeout == .milliseconds(500))
        #expect(several.connectTimeout == .milliseconds(200))
        #expect(throws: ProbeOptions.UsageError.self) { try ProbeOptions(["--live", "--ready"]) }
        #expect(throws: ProbeOptions.UsageError.self) { try ProbeOptions(["--timeout", "soon"]) }
        #expect(throws: ProbeOptions.UsageError.self) { try ProbeOptions(["--connect-timeout", "5s", "--timeout", "1s"]) }
        #expect(throws: ProbeOptions.UsageError.self) { try ProbeOptions(["--check"]) }
        #expect(try ProbeOptions(["top", "--watch"]).watch == .seconds(2))
    }

    /// `why APP/DEPENDENCY`: the first slash splits (a dependency's name may hold more); either side
    /// empty, or an option of another mode, is a usage error; the query carries any byte safely.
    @Test func whyOptions() throws {
        let why = try ProbeOptions(["why", "orders/name (Cache/Store)", "--timeout", "1s"]).why
        #expect(why?.app == "orders" && why?.dependency == "name (Cache/Store)")
        for bad in [["why"], ["why", "orders"], ["why", "/Database"], ["why", "orders/"], ["why", "a/b", "--json"], ["why", "a/b", "--live"]] {
            #expect(throws: ProbeOptions.UsageError.self, "\(bad)") { try ProbeOptions(bad) }
        }
        #expect(Why.percentEncoded("a b&c=d/é~") == "a%20b%26c%3Dd%2F%C3%A9~")
    }

    @Test func json() {
        let value = JSONValue.parse(Array(#"{"a": [1, 2.5e3, "x\"y\u00e9", true, null], "b": {}}"#.utf8))
        #expect(value?["a"] == .array([.number(1), .number(2500), .string("x\"yé"), .bool(true), .null]))
        #expect(value?["b"] == .object([]))
        for bad in ["", "{", "{\"a\":}", "[1,]", "{\"a\":1} x", "\"\u{01}\""] { #expect(JSONValue.parse(Array(bad.utf8)) == nil) }
    }

    @Test func httpReplies() throws {
        let plain = try HTTPReply.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), complete: false)
        #expect(plain?.status == 200 && plain?.body == Array("ok".utf8))
        #expect(try HTTPReply.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok".utf8), complete: false) == nil)
        let chunked = try HTTPReply.parse(Array("HTTP/1.1 503 X\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n".utf8), complete: false)
        #expect(chunked?.body == Array("abc".utf8))
        #expect(throws: ProbeError.self) { try HTTPReply.parse(Array("SSH-2.0-OpenSSH\r\n".utf8), complete: false) }
        #expect(throws: ProbeError.self) { try HTTPReply.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok".utf8), complete: true) }
    }

    /// Read as it arrives, a byte at a time, a response is the one read whole, and is complete
    /// only at its last byte; for a chunked body and one with a Content-Length.
    /// The daemon's https checks read with the same reader: an answer cut where their buffer filled
    /// gives the body that came (`.cut`); one the server cut short is refused (`.closed`).
    @Test func aCutAnswerGivesWhatCameAndAClosedOneMustBeWhole() throws {
        for text in ["HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n64\r\nde"] {
            var cut = HTTPReplyReader(maxBytes: .max)
            cut.append(Array(text.utf8)[...])
            #expect(try cut.reply(.cut)?.body == Array("abc".utf8), "\(text)")
            var closed = HTTPReplyReader(maxBytes: .max)
            closed.append(Array(text.utf8)[...])
            #expect(throws: HTTPReplyError.self) { try closed.reply(.closed) }
        }
        var bounded = HTTPReplyReader(maxBytes: 10)
        bounded.append(Array("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n".utf8)[...])
        #expect(throws: HTTPReplyError.self) { try bounded.reply(.open) }
    }

    @Test func aResponseReadAByteAtATimeIsTheResponseReadWhole() throws {
        let body = Array((0..<3_000).map { "line \($0)\n" }.joined().utf8)
        var chunks: [UInt8] = []
        for start in stride(from: 0, to: body.count, by: 7) {
            let chunk = body[start..<min(body.count, start + 7)]
            chunks += Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + [13, 10]
        }
        let responses = [
            Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + chunks + Array("0\r\n\r\n".utf8),
            Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body,
        ]
        for response in responses {
            var reader = HTTPReplyReader(maxBytes: HTTPProbe.maxResponseBytes)
            for (index, byte) in response.enumerated() {
                reader.append([byte][...])
                let reply = try reader.reply(.open)
                #expect((reply == nil) == (index < response.count - 1 - (response.last == 10 && response[response.count - 2] == 13 ? 2 : 0)))
                if let reply {
                    #expect(reply.body == body)
                    break
                }
            }
        }
    }

    private func report(_ checks: [CheckResult]) -> ProbeReport {
        let state = checks.map(\.state).max() ?? .healthy
        return ProbeReport(state: state, checks: checks, summary: ProbeReport.summarize(state, checks),
                           target: .daemonDefault, elapsed: .milliseconds(4))
    }

    @Test func exitCodes() {
        let degraded = report([CheckResult(name: "disk", state: .degraded, output: "9% free")])
        #expect(degraded.exitCode(strict: false) == 0)
        #expect(degraded.exitCode(strict: true) == 1)
        #expect(degraded.nagiosCode == 1)
        #expect(report([CheckResult(name: "db", state: .unhealthy)]).exitCode(strict: false) == 1)
        #expect(report([CheckResult(name: "db", state: .unhealthy)]).nagiosCode == 2)
    }

    /// Nagios plugin output: `SERVICE STATUS - text | perfdata`, perfdata being
    /// `'label'=value[UOM];[warn];[crit];[min];[max]` separated by spaces, then long output.
    @Test func nagiosOutputFollowsThePluginGrammar() throws {
        let text = report([
            CheckResult(name: "disk-root", state: .unhealthy, output: "3% free", observedValue: 3, observedUnit: "%"),
            CheckResult(name: "it's", state: .healthy, observedValue: 0.25, observedUnit: "s"),
            CheckResult(name: "exec", state: .healthy, observedValue: 0, observedUnit: "exit"),
        ]).nagiosText
        let lines = text.split(separator: "\n")
        #expect(lines[0].hasPrefix("WEAVE HEALTH CRITICAL - 1 of 3 unhealthy: disk-root (3% free) | "))
        let perfdata = try #require(lines[0].split(separator: "|").last).split(separator: " ")
        let grammar = /'([^']|'')+'=-?[0-9.]+(%|s|ms|us|B|KB|MB|TB|c)?;[0-9.]*;[0-9.]*;[0-9.]*;[0-9.]*/
        for item in perfdata { #expect(item.wholeMatch(of: grammar) != nil, "\(item)") }
        #expect(perfdata.contains("'disk-root'=3%;;;0;100"))
        #expect(perfdata.contains("'it''s'=0.25s;;;0;"))
        #expect(lines[1...].map(String.init) == ["[CRITICAL] disk-root: 3% free", "[OK] it's", "[OK] exec"])
    }

    @Test func peopleReadDurationsInTheirScale() {
        let text = report([
            CheckResult(name: "self-port", state: .healthy, observedValue: 0.000688752, observedUnit: "s"),
            CheckResult(name: "slow", state: .degraded, observedValue: 1.25, observedUnit: "s"),
            CheckResult(name: "disk-root", state: .healthy, observedValue: 28.9, observedUnit: "%"),
            CheckResult(name: "exec", state: .healthy, observedValue: 0, observedUnit: "exit"),
        ]).humanText(color: false)
        let values = text.split(separator: "\n").dropFirst().map { $0.split(separator: " ").suffix(2).joined(separator: " ") }
        #expect(values == ["healthy 688.8µs", "degraded 1.3s", "healthy 28.9%", "0 exit"], "\(text)")
    }

    @Test func jsonModeAddsTheProbeToTheDocument() throws {
        let raw = Array(#"{"status":"warn","checks":{"disk:status":[{"status":"warn","output":"low"}]}}"#.utf8)
        let document = try HealthDocument(raw)
        #expect(document.checks == [CheckResult(name: "disk", state: .degraded, output: "low")])
        let text = Probe.json(report(document.checks), document, exitCode: 0)
        let parsed = try #require(JSONValue.parse(Array(text.utf8)))
        #expect(parsed["status"] == .string("warn"))
        #expect(parsed["probe"]?["exitCode"] == .number(0))
        #expect(parsed["probe"]?["durationSeconds"] == .number(0.004))
    }

    @Test func topRendersACapturedMetricsFixture() throws {
        let path = "/" + #filePath.split(separator: "/").dropLast().joined(separator: "/") + "/Fixtures/metrics.txt"
        let table = try MetricsTable(exposition: Array(try #require(ProbeOptions.read(path)).utf8))
        #expect(table.rows.map(\.service) == ["meh (HealthCheckable)", "disk-root (HealthCheckable)", "good (HealthCheckable)"])
        #expect(table.rows.map(\.health) == ["degraded", "healthy", "healthy"])
        #expect(table.rows.allSatisfy { $0.resolutions == 2 && $0.errors == 0 })
        let text = table.render(source: "fixture", limit: 2, color: false)
        #expect(text.contains("SERVICE"))
        #expect(text.contains("meh (HealthCheckable)                2    30.0µs    49.6µs         0         0  degraded"))
        #expect(text.contains("… 1 more (--limit)"))
    }

    /// From a daemon that aggregates applications: their services as `<app>/<service>`, the daemon's
    /// own only with `--own`; a label that merely ends in `app` aggregates nothing.
    @Test func topShowsApplicationsServicesAndTheDaemonsOwnOnRequest() throws {
        let exposition = """
            # TYPE weave_resolutions counter
            weave_resolutions_total{dependency="disk-root"} 4
            weave_resolutions_total{app="orders",dependency="Database"} 7
            weave_resolutions_total{app="billing",webapp="x",dependency="Database"} 2
            """
        #expect(Set(try MetricsTable(exposition: Array(exposition.utf8)).rows.map(\.service)) == ["orders/Database", "billing/Database"])
        #expect(Set(try MetricsTable(exposition: Array(exposition.utf8), includeOwn: true).rows.map(\.service))
            == ["orders/Database", "billing/Database", "disk-root"])
        let unlabelled = "# TYPE weave_resolutions counter\nweave_resolutions_total{webapp=\"x\",dependency=\"disk-root\"} 4\n"
        #expect(try MetricsTable(exposition: Array(unlabelled.utf8)).rows.map(\.service) == ["disk-root"])
    }

    /// A down application has no series but `weave_app_up 0`: `top` lists it first, with its reason,
    /// before the slowest services of the others.
    @Test func topShowsDownApplicationsFirstWithTheirReason() throws {
        let exposition = """
            # TYPE weave_app_up gauge
            weave_app_up{app="billing"} 1
            weave_app_up{app="orders"} 0
            # TYPE weave_resolutions counter
            weave_resolutions_total{app="billing",dependency="Database"} 7

            """
        let table = try MetricsTable(exposition: Array(exposition.utf8))
        #expect(table.downApps == ["orders"])
        let text = table.render(source: "test", limit: 10, color: false, reasons: ["orders": "orders is down: connection refused"])
        #expect(text.hasPrefix("weave-health top - test - 1 services, 1 application down\n\nDOWN  orders  orders is down: connection refused\n\nSERVICE"))
        #expect(text.contains("billing/Database"))
    }

    /// Label values are an application's bytes: what `top` shows of them (app, service, health) cannot
    /// move the cursor or colour the terminal.
    @Test func topShowsNoLabelByteAsIs() throws {
        let exposition = """
            # TYPE weave_health_status gauge
            weave_health_status{app="a\u{1B}[2J",check="db\u{1B}[31m",state="healthy\u{1B}[H"} 1
            weave_health_status{app="b\u{202E}gnp",check="x\u{200B}y",state="healthy"} 1

            """
        let text = try MetricsTable(exposition: Array(exposition.utf8)).render(source: "test", limit: 10, color: false)
        #expect(!text.unicodeScalars.contains("\u{1B}") && !text.unicodeScalars.contains("\u{202E}"))
        #expect(text.contains(#"b\u{202E}gnp/x\u{200B}y"#), "bidi and invisible characters too, as the daemon's log lines")
        #expect(text.contains(#"a\u{1B}[2J/db\u{1B}[31m"#))
        #expect(text.contains(#"healthy\u{1B}[H"#))
    }

    /// Whatever number an exposition or a `/health` answer holds, `top` and the Nagios line show it
    /// and never trap converting it (#64: `Int64(1e300)` does).
    @Test func extremeNumbersAreShownNotTrapped() {
        for text in numberExtremes + ["+Inf", "-Inf", "NaN"] {
            let exposition = """
                # TYPE weave_resolutions counter
                weave_resolutions_total{dependency="D"} \(text)
                # TYPE weave_resolve_duration_seconds histogram
                weave_resolve_duration_seconds_bucket{dependency="D",path="factory",le="+Inf"} 1
                weave_resolve_duration_seconds_sum{dependency="D",path="factory"} \(text)
                weave_resolve_duration_seconds_count{dependency="D",path="factory"} 1

                """
            _ = try? MetricsTable(exposition: Array(exposition.utf8)).render(source: "test", limit: 10, color: false)
            let value = Double(text.lowercased())!
            _ = MetricsTable.duration(value)
            _ = MetricsTable.count(value)
            _ = ProbeReport.decimal(value)
        }
        #expect(MetricsTable.count(1e300) == "1e+300" && ProbeReport.decimal(1e300) == "1e+300")
        #expect(MetricsTable.duration(-1e300) == "-1e+300s" && MetricsTable.duration(0.0262) == "26.2ms")
    }

    /// `top` reads with the daemon's own parser: an exposition Prometheus would reject (here a series
    /// given twice) is refused whole, with the line, rather than shown in part.
    @Test func topRefusesAnInvalidExposition() {
        let twice = """
            # TYPE weave_resolutions counter
            weave_resolutions_total{dependency="Database"} 4
            weave_resolutions_total{dependency="Database"} 5

            """
        #expect(throws: ExpositionParser.Failure.self) { try MetricsTable(exposition: Array(twice.utf8)) }
    }

    /// `top --timeout` bounds the whole round, parsing too: a series of 100,000 labels (which took
    /// 11.5 s) is refused at the label limit, and a deadline already past stops a long answer.
    @Test func topReadsWithinItsTimeout() throws {
        let wide = "# TYPE weave_resolutions counter\nweave_resolutions_total{dependency=\"D\","
            + (0..<100_000).map { "l\($0)=\"\"" }.joined(separator: ",") + "} 1\n"
        #expect(throws: ExpositionParser.Failure.self) { try MetricsTable(exposition: Array(wide.utf8)) }
        let long = "# TYPE weave_resolutions counter\n" + (0..<5_000).map { "weave_resolutions_total{dependency=\"D\($0)\"} 1\n" }.joined()
        #expect(throws: ExpositionParser.Failure.self) { try MetricsTable(exposition: Array(long.utf8), deadline: .now) }
    }

    /// The quantiles the application computed from its finer buckets win over interpolating the
    /// exported ones: a steady 50.1 ms factory read 75 ms (p50) and 99.5 ms (p99) from 1-5-10 buckets.
    @Test func topPrefersTheApplicationsOwnQuantiles() throws {
        let exposition = """
            # TYPE weave_resolutions counter
            weave_resolutions_total{app="orders",dependency="ReportBuilder"} 40
            weave_resolutions_total{app="orders",dependency="Old"} 10
            weave_resolutions_total{app="orders",dependency="Database"} 0
            # TYPE weave_resolve_duration_seconds histogram
            weave_resolve_duration_seconds_bucket{app="orders",dependency="ReportBuilder",path="factory",le="0.047"} 0
            weave_resolve_duration_seconds_bucket{app="orders",dependency="ReportBuilder",path="factory",le="0.056"} 40
            weave_resolve_duration_seconds_bucket{app="orders",dependency="ReportBuilder",path="factory",le="+Inf"} 40
            weave_resolve_duration_seconds_sum{app="orders",dependency="ReportBuilder",path="factory"} 2.02
            weave_resolve_duration_seconds_count{app="orders",dependency="ReportBuilder",path="factory"} 40
            weave_resolve_duration_seconds_bucket{app="orders",dependency="Old",path="factory",le="0.047"} 0
            weave_resolve_duration_seconds_bucket{app="orders",dependency="Old",path="factory",le="0.056"} 10
            weave_resolve_duration_seconds_bucket{app="orders",dependency="Old",path="factory",le="+Inf"} 10
            weave_resolve_duration_seconds_sum{app="orders",dependency="Old",path="factory"} 0.515
            weave_resolve_duration_seconds_count{app="orders",dependency="Old",path="factory"} 10
            weave_resolve_duration_seconds_bucket{app="orders",dependency="Database",path="factory",le="0.047"} 1
            weave_resolve_duration_seconds_bucket{app="orders",dependency="Database",path="factory",le="+Inf"} 1
            weave_resolve_duration_seconds_sum{app="orders",dependency="Database",path="factory"} 0.01
            weave_resolve_duration_seconds_count{app="orders",dependency="Database",path="factory"} 1
            # TYPE weave_resolve_latency_seconds summary
            weave_resolve_latency_seconds{app="orders",dependency="ReportBuilder",quantile="0.5"} 0.0505
            weave_resolve_latency_seconds{app="orders",dependency="ReportBuilder",quantile="0.99"} 0.0507

            """
        let rows = Dictionary(uniqueKeysWithValues: try MetricsTable(exposition: Array(exposition.utf8)).rows.map { ($0.service, $0) })
        #expect(rows["orders/ReportBuilder"]?.p50 == 0.0505 && rows["orders/ReportBuilder"]?.p99 == 0.0507)
        #expect(abs((rows["orders/Old"]?.p50 ?? 0) - 0.0515) < 1e-9, "no quantiles: the buckets, interpolated")
        // Never resolved: its one factory run was a health check's creation, not a resolve.
        #expect(rows["orders/Database"] != nil && rows["orders/Database"]?.p50 == nil && rows["orders/Database"]?.p99 == nil)
    }

    @Test func quantilesInterpolateInsideTheirBucket() {
        let buckets: [(key: Double, value: Double)] = [(0.001, 50), (0.01, 90), (0.1, 100), (.infinity, 100)]
        #expect(MetricsTable.quantile(0.5, buckets) == 0.001)
        #expect(abs(MetricsTable.quantile(0.99, buckets)! - 0.091) < 1e-9)
        #expect(MetricsTable.quantile(0.5, [(.infinity, 0)]) == nil)
    }
}
