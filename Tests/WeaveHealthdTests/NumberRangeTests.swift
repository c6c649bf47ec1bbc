import Logging
import Testing
@testable import WeaveHealthd
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveObservability
import WeavePrometheus
import WeaveSupport
import WeaveTestSupport

/// Round 5's range attack (#64): every number of an application's `/events`, `/dependencies` and
/// `/health`, and of the daemon's saved event positions, replaced in turn by each of
/// `numberExtremes`, through the reader and everything that shows what it read: the journal (a
/// restart's times), `/why`, the status page. A time out of `Timestamp.dates` is refused where it
/// is read. A trap anywhere ends the test run (it took the daemon down: `"started": 1e300`).
@Suite struct NumberRangeTests {
    private let generous = LogRateLimit(burst: 1_000, window: .seconds(10))
    private static let now = 1_800_000_000.0
    private static let identity = ServiceIdentity(serviceID: "weave-healthd", description: "", version: "0.1.0")

    /// A page with one event of each kind that has times or counts in its fields.
    private static func eventPage() -> String {
        let log = ContainerEventLog(capacity: 16)
        let tree = StartupTree(runs: [StartupTree.Run(service: "Orders", parent: nil, start: .zero, total: .milliseconds(35),
                                                      selfTime: .milliseconds(35))], endedAt: now, omitted: 0)
        log.append(.startup, Instrumentation.metadata(tree).mapValues { "\($0)" }, at: now)
        log.append(.slowResolution, ["dependency": "Orders", "duration_usec": "30000", "threshold_usec": "10000",
                                     "chain": "Orders", "chain_usec": "30000/30000", "self_usec": "30000", "slowest": "Orders"], at: now + 1)
        log.append(.resolutionError, ["dependency": "Refunds", "error_kind": "factory_failed", "error": "down"], at: now + 2)
        return log.json(after: 0, limit: 256)
    }

    @Test func everyNumberOfAnEventPageIsReadInRange() throws {
        let valid = Self.eventPage()
        let variants = numberVariants(of: valid)
        #expect(variants.count > 5 * numberExtremes.count, "started, first, next, and each event's seq and time")
        var refused = 0
        for variant in variants {
            let records = LogRecords()
            let journal = AppEventJournal(limit: generous, started: 0, logger: records.logger)
            try journal.ingest("orders", Array(valid.utf8))
            // Read after a valid page: a new `started` is a restart, whose times are journaled.
            do throws(FetchFailure) {
                try journal.ingest("orders", Array(variant.text.utf8))
            } catch {
                refused += 1
            }
            if let page = ContainerEventPage(Array(variant.text.utf8)) {
                #expect(Timestamp.dates.contains(page.started) && page.events.allSatisfy { Timestamp.dates.contains($0.time) },
                        "number \(variant.field) as \(variant.extreme) read as a time out of range")
            }
            if let slow = journal.slowChains.last("orders", through: "Orders") {
                _ = DependencyWhy.render(app: "orders", dependency: "Orders", slow: slow, startup: nil)
            }
            for entry in records.entries { _ = entry.message.description }
        }
        #expect(refused > 0)
        for extreme in ["1e300", "-1", "253402300800", "-1e300"] {
            let page = valid.replacingFirst("\"started\":", with: "\"started\":\(extreme),\"was\":")
            #expect(ContainerEventPage(Array(page.utf8)) == nil, "started \(extreme) is no date")
        }
    }

    /// The daemon's own state: a file with a position saved at a time out of range is refused
    /// whole (`StateFile.load` logs it, and the daemon starts as on a first start), never a trap at
    /// every start after.
    @Test func everyNumberOfTheSavedPositionsIsReadInRange() {
        let valid = EventPositions.render(["orders": EventPositions.Place(started: Self.now, last: 42)])
        #expect(EventPositions.parse(Array(valid.utf8))?["orders"]?.last == 42)
        for variant in numberVariants(of: valid) {
            guard let places = EventPositions.parse(Array(variant.text.utf8)) else { continue }
            #expect(places.values.allSatisfy { Timestamp.dates.contains($0.started) }, "\(variant.extreme) kept as a time")
        }
    }

    @Test func everyNumberOfADependencySummaryIsReadInRange() {
        let tree = StartupTree(runs: [StartupTree.Run(service: "Orders", parent: nil, start: .zero, total: .milliseconds(35),
                                                      selfTime: .milliseconds(5)),
                                      StartupTree.Run(service: "Ledger", parent: "Orders", start: .milliseconds(5),
                                                      total: .milliseconds(30), selfTime: .milliseconds(30))],
                               endedAt: Self.now, omitted: 1)
        let summary = DependencySummary(version: "1.4.0", startedAt: Self.now - 60, dependencies: [
            .init(name: "Orders", resolutions: 12, slow: 3, errors: 1, p50: 0.0251, p99: 0.0262),
        ], startup: tree)
        #expect(DependencySummary(json: Array(summary.json.utf8))?.json == summary.json)
        var read = 0
        for variant in numberVariants(of: summary.json) {
            guard let parsed = DependencySummary(json: Array(variant.text.utf8)) else { continue }
            read += 1
            #expect(parsed.startedAt.map(Timestamp.dates.contains) ?? true && parsed.startup?.endedAt.map(Timestamp.dates.contains) ?? true,
                    "number \(variant.field) as \(variant.extreme) read as a time out of range")
            let apps = [AppFleet.AppView(name: "orders", address: "unix:/run/weave/apps/orders.sock", reachable: true, reason: nil,
                                         dependencies: AppDependencies(parsed, at: Self.now, after: AppDependencies(summary, at: Self.now - 10, after: nil)))]
            _ = StatusDocument(report: HealthReport(checks: [:]), apps: apps, history: StatusHistory().snapshot(at: Self.now),
                               now: Self.now, details: true, filter: nil).render(Self.identity)
            _ = DependencyWhy.render(app: "orders", dependency: "Ledger", slow: nil, startup: parsed.startup)
        }
        #expect(read > 0)
        let future = summary.json.replacingFirst("\"startedAt\":", with: "\"startedAt\":1e300,\"was\":")
        #expect(DependencySummary(json: Array(future.utf8)) == nil, "a start time of 1e300 is no date")
    }

    @Test func everyNumberOfAHealthAnswerIsReadInRange() throws {
        let body = #"{"status":"warn","checks":{"store:status":[{"componentId":"store","status":"warn","observedValue":12.5,"#
            + #""changedAt":"2027-01-15T07:43:20.000Z","time":"2027-01-15T08:00:00.000Z"}]}}"#
        #expect(try AppHealth(Array(body.utf8), status: 200).components.count == 1)
        for variant in numberVariants(of: body) {
            guard let health = try? AppHealth(Array(variant.text.utf8), status: 200) else { continue }
            for component in health.components {
                #expect(component.changedAt.map(Timestamp.dates.contains) ?? true)
                _ = Timestamp.rfc3339(component.changedAt ?? 0)
            }
        }
    }

    /// An application's `/metrics` with each value replaced: refused with a reason, or read and
    /// served in a merged exposition that renders (values are floats there; counts that must be
    /// whole and not negative are the parser's rules).
    @Test func everyNumberOfAnExpositionIsReadOrRefused() throws {
        let exposition = """
            # TYPE orders counter
            orders_total{path="a"} 3
            # TYPE queue gauge
            queue 2.5
            # TYPE latency_seconds histogram
            latency_seconds_bucket{le="0.1"} 1
            latency_seconds_bucket{le="+Inf"} 2
            latency_seconds_sum 0.3
            latency_seconds_count 2
            # TYPE rpc_seconds summary
            rpc_seconds{quantile="0.5"} 0.02
            rpc_seconds_sum 1
            rpc_seconds_count 40
            # EOF

            """
        #expect(try ExpositionParser.parse(Array(exposition.utf8), adding: [("app", "orders")]).count == 4)
        var read = 0
        for variant in numberVariants(of: exposition) {
            guard let families = try? ExpositionParser.parse(Array(variant.text.utf8), adding: [("app", "orders")]) else { continue }
            read += 1
            for format in Exposition.Format.allCases { _ = Exposition.render(families, format: format) }
        }
        #expect(read > 0)
        // A count protobuf cannot carry is refused at read: rendered for a protobuf scrape (native
        // histograms), `UInt64(1e300)` took the daemon down.
        for count in ["1e300", "+Inf", "18446744073709551616"] {
            let huge = exposition.replacing("latency_seconds_count 2", with: "latency_seconds_count \(count)")
                .replacing("latency_seconds_bucket{le=\"+Inf\"} 2", with: "latency_seconds_bucket{le=\"+Inf\"} \(count)")
            #expect(throws: ExpositionParser.Failure.self) { try ExpositionParser.parse(Array(huge.utf8)) }
        }
    }

    /// A heartbeat file anyone can touch, dated as far back as the clock goes (tmpfs keeps any
    /// 64-bit time): the file check says how old, and does not trap converting it.
    @Test func aFileDatedAtTheStartOfTimeIsOldNotATrap() async throws {
        let path = "/dev/shm/weave-file-check-\(getpid())"
        fclose(try #require(fopen(path, "w")))
        defer { unlink(path) }
        var times = [timespec(tv_sec: .min, tv_nsec: 0), timespec(tv_sec: .min, tv_nsec: 0)]
        try #require(utimensat(AT_FDCWD, path, &times, 0) == 0, "tmpfs keeps any 64-bit time")
        let check = FileCheck(name: "heartbeat", path: path, maxAge: .seconds(60), observations: Observations())
        let status = await check.healthCheck()
        #expect(status.state == .unhealthy && status.reason?.contains("e+18 s old") == true, "\(status.reason ?? "")")
    }

    /// Times the daemon formats are bounded where they are formatted too: a value no reader should
    /// have let through is shown as the nearest representable date, not a trap.
    @Test func formattingAnyDoubleAsATimeNeverTraps() {
        for text in numberExtremes + ["nan", "inf", "-inf"] {
            let value = Double(text)!
            _ = Timestamp.rfc3339(value.isFinite ? value : 0)
            _ = Timestamp.readable(value.isFinite ? value : 0)
            _ = StatusDocument.duration(value.isNaN ? 0 : value)
        }
        #expect(Timestamp.rfc3339(1e300) == "9999-12-31T23:59:59.000Z" && Timestamp.rfc3339(-1e300) == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp.date(-157_766_400) == "1965-01-01", "a certificate may have expired before 1970 (tls.sh)")
        #expect(Int(checked: 1e300) == nil && Int64(checked: -0.0) == 0 && UInt64(checked: -1) == nil && Int32(checked: 2.9) == 2)
    }
}

private extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return self[..<range.lowerBound] + replacement + self[range.upperBound...]
    }
}
