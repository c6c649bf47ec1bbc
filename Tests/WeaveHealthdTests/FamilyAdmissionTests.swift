import NIOPosix
import Testing
@testable import WeaveHealthd
import WeaveObservability
import WeavePrometheus
import WeaveSystemd

@Suite struct FamilyAdmissionTests {
    static func family(_ name: String, _ kind: MetricFamily.Kind, app: String) -> MetricFamily {
        switch kind {
        case .counter: .counter(name, "h", [([("app", app)], 1)])
        case .histogram:
            MetricFamily(name: name, kind: .histogram, help: "h", histograms: [
                .init(labels: [("app", app)], bucketLabels: ["+Inf"], bucketCounts: [1], sum: 1),
            ])
        default: MetricFamily(name: name, kind: kind, help: "h", samples: [.init(labels: [("app", app)], value: 1)])
        }
    }

    /// Every family of the daemon-only collectors, the applications' (`weave_app_*`) and the
    /// textfiles' is under a reserved prefix: no application can export one.
    @Test func everyDaemonOnlyFamilyIsReserved() async throws {
        let configuration = try ConfigurationLoader(file: "t.yaml", text: "apps: {discover: false}\ntextfile: {directory: /nonexistent}\n").parse()
        let runtime = await Runtime(configuration: configuration, shared: DaemonShared(group: MultiThreadedEventLoopGroup.singleton,
                                                                                       connections: ConnectionPool(capacity: 1), blocking: BlockingCalls()))
        let source = DaemonSource(runtime)
        runtime.observations.record("c", of: ExecCheck.Options.self, Perfdata.Kind.allCases.map { Perfdata(label: "x", value: 1, kind: $0) })
        let textfiles = Textfiles(blocking: BlockingCalls()) { source.runtime.configuration.textfile }
        let collectors = DaemonOnlyCollectors.all(source: source, reloads: ReloadMetrics(), journal: JournalWriter())
            + [DaemonExposition(fleet: { source.runtime.apps }, textfiles: textfiles)]
        var names: [String] = []
        for collector in collectors { names += await collector.collect().map(\.name) }
        #expect(names.count >= 16)
        let open = names.filter { name in !FamilyAdmission.reservedPrefixes.contains { name.hasPrefix($0) } }
        #expect(open.isEmpty, "families an application could forge: \(open)")
        // …and none of the applications' own vocabulary is.
        let shared = HealthMetrics.familyNames.union(ContainerMetrics.familyNames)
        let closed = shared.filter { name in FamilyAdmission.reservedPrefixes.contains { name.hasPrefix($0) } }
        #expect(closed.isEmpty, "families every container exports, reserved: \(closed)")
    }

    /// In a protobuf scrape, one application's classic histogram cannot turn another's native one
    /// into `_count`, `_sum` and `+Inf` (Prometheus takes the kind from the family's first series):
    /// the later kind is dropped, with `conflict`. A family without series yet decides nothing,
    /// and a text scrape, where both are classic, merges them.
    @Test func nativeAndClassicHistogramsOfOneFamilyAreNotMixed() {
        var native = Self.family("latency", .histogram, app: "a")
        native.histograms[0].native = NativeHistogram(schema: 3, zeroThreshold: 0x1p-20, zeroCount: 1, positive: [.init(index: 0, count: 0)], negative: [])
        let classic = Self.family("latency", .histogram, app: "b")
        let empty = MetricFamily(name: "latency", kind: .histogram, help: "h")
        let apps: [(app: String, families: [MetricFamily])] = [("a", [native]), ("b", [classic])]
        let (families, dropped) = FamilyAdmission.admit(own: [empty], apps: apps, native: true)
        #expect(families.count == 2 && dropped == [.init(source: "b", family: "latency", reason: .conflict)])
        let reversed = FamilyAdmission.admit(own: [], apps: apps.reversed(), native: true)
        #expect(reversed.dropped == [.init(source: "a", family: "latency", reason: .conflict)])
        #expect(FamilyAdmission.admit(own: [empty], apps: apps).dropped.isEmpty)
    }

    /// No application can speak for the daemon, or erase another's series by declaring its family
    /// under another type: the later family is dropped, with its reason; same name and type merge.
    @Test func theFirstClaimKeepsANameAndTheRestAreDroppedWithAReason() {
        let own: [MetricFamily] = [
            .gauge("weave_config_last_reload_successful", "h", [([], 1)]),
            .counter("weave_resolutions", "h", [([("dependency", "x")], 1)]),
        ]
        let apps: [(app: String, families: [MetricFamily])] = [
            ("a", [Self.family("weave_config_last_reload_successful", .gauge, app: "a"), Self.family("weave_app_up", .gauge, app: "a"),
                   Self.family("weave_resolutions", .counter, app: "a"), Self.family("queue_depth", .gauge, app: "a"),
                   Self.family("latency", .histogram, app: "a")]),
            ("b", [Self.family("queue_depth", .counter, app: "b"), Self.family("weave_resolutions", .gauge, app: "b"),
                   Self.family("latency_count", .gauge, app: "b"), Self.family("weave_resolutions_total", .gauge, app: "b"),
                   Self.family("queue", .gauge, app: "b")]),
        ]
        let (families, dropped) = FamilyAdmission.admit(own: own, apps: apps)
        #expect(families.map(\.name) == ["weave_config_last_reload_successful", "weave_resolutions", "weave_resolutions",
                                         "queue_depth", "latency", "queue"])
        #expect(families[0].samples.first?.labels.isEmpty == true, "the daemon's own stays")
        #expect(dropped == [
            .init(source: "a", family: "weave_config_last_reload_successful", reason: .reserved),
            .init(source: "a", family: "weave_app_up", reason: .reserved),
            .init(source: "b", family: "queue_depth", reason: .conflict),
            .init(source: "b", family: "weave_resolutions", reason: .conflict),
            .init(source: "b", family: "latency_count", reason: .conflict),
            .init(source: "b", family: "weave_resolutions_total", reason: .conflict),
        ])
        // Rendered, one TYPE line per name, and promtool's parser would see no family twice.
        for format in [Exposition.Format.prometheusText, .openMetrics] {
            let text = String(decoding: Exposition.render(families, format: format), as: UTF8.self)
            let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
            #expect(Set(types).count == types.count, "\(types)")
        }
    }

    /// Dropped families are counted per application and reason, and an application that left is forgotten.
    @Test func dropsAreCountedAndLeftApplicationsForgotten() {
        let drops = DroppedFamilies()
        drops.note([.init(source: "a", family: "x", reason: .conflict), .init(source: "a", family: "weave_app_up", reason: .reserved)])
        drops.note([.init(source: "a", family: "x", reason: .conflict)])
        let text = String(decoding: Exposition.render([drops.family(current: ["a", "b"])], format: .prometheusText), as: UTF8.self)
        #expect(text.contains("weave_app_dropped_families_total{app=\"a\",reason=\"conflict\"} 2\n"))
        #expect(text.contains("weave_app_dropped_families_total{app=\"a\",reason=\"reserved\"} 1\n"))
        #expect(text.contains("weave_app_dropped_families_total{app=\"b\",reason=\"conflict\"} 0\n"))
        let after = String(decoding: Exposition.render([drops.family(current: ["b"])], format: .prometheusText), as: UTF8.self)
        #expect(!after.contains("app=\"a\""))
    }
}
