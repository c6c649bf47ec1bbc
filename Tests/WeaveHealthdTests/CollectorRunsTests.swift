import Testing
@testable import WeaveHealthd
import WeavePrometheus
import WeaveSupport
import WeaveTestSupport

private struct Fixed: MetricCollector {
    let name: String
    let families: [MetricFamily]
    /// How far the collection moves the test's clock: the time it takes.
    var takes: (ManualClock, Duration)?
    func collect() async -> [MetricFamily] {
        if let (clock, duration) = takes { clock.advance(by: duration) }
        return families
    }
}

@Suite struct CollectorRunsTests {
    /// Every collector is timed and named; a family a second collector renders under a name the
    /// first took is left out, and that collector's success is 0 (one home per family).
    @Test func eachCollectorIsTimedAndASecondHomeFails() async {
        let clock = ManualClock()
        let families = await CollectorRuns.collect([
            Fixed(name: "first", families: [.gauge("weave_test_a", "A.", [([], 1)])], takes: (clock, .milliseconds(50))),
            Fixed(name: "second", families: [.counter("weave_test_a", "A again, as a counter.", [([], 2)]),
                                             .gauge("weave_test_b", "B.", [([], 3)])]),
        ], clock: ElapsedClock(clock))
        #expect(families.map(\.name) == ["weave_test_a", "weave_test_b", "weave_scrape_collector_duration_seconds",
                                         "weave_scrape_collector_success"])
        #expect(families[0].kind == .gauge, "the first home keeps the name")
        let durations = Dictionary(uniqueKeysWithValues: families[2].samples.map { ($0.labels[0].1, $0.value) })
        #expect(durations == ["first": 0.05, "second": 0], "each collector's own time, none of the other's")
        let success = Dictionary(uniqueKeysWithValues: families[3].samples.map { ($0.labels[0].1, $0.value) })
        #expect(success == ["first": 1, "second": 0])
    }

    /// A collector whose collection fails (node_exporter's `Update() error`) shows success 0; what it
    /// made, and the other collectors' families, stay.
    @Test func aFailedCollectionShowsZeroAndTheRestStays() async {
        struct Failing: MetricCollector {
            var name: String { "failing" }
            func collect() async -> [MetricFamily] { [] }
            func collection(for format: Exposition.Format) async -> CollectedFamilies {
                CollectedFamilies([.gauge("weave_test_partial", "What it could read.", [([], 1)])], failure: "cannot read /proc/self/stat")
            }
        }
        let families = await CollectorRuns.collect([Failing(), Fixed(name: "other", families: [.gauge("weave_test_b", "B.", [([], 3)])])])
        #expect(families.map(\.name).prefix(2) == ["weave_test_partial", "weave_test_b"])
        let success = Dictionary(uniqueKeysWithValues: families.last!.samples.map { ($0.labels[0].1, $0.value) })
        #expect(success == ["failing": 0, "other": 1])
    }

    /// The check types with metric families are the ones whose file says them, each a collector
    /// of its own, named after the type, whose families all start with the type's `familyPrefix`.
    @Test func checkTypesBringTheirFamilies() throws {
        let declared = try CheckTypeSources.declared().filter(\.hasMetrics).map(\.typeName)
        #expect(!declared.isEmpty && Set(CheckTypes.withMetrics.map { $0.typeName }) == Set(declared))
        for type in CheckTypes.withMetrics {
            let families = type.families(Observations()).map(\.name)
            #expect(!families.isEmpty && families.allSatisfy { $0.hasPrefix(type.familyPrefix) }, "\(type.typeName): \(families)")
            #expect(FamilyAdmission.reservedPrefixes.contains(type.familyPrefix))
        }
        let observations = Observations()
        observations.record("disk", of: ExecCheck.Options.self, [Perfdata(label: "used", value: 0.5, kind: .ratio)])
        let exec = ExecCheck.Options.families(observations)
        #expect(exec.first { $0.name == "weave_check_perfdata_ratio" }?.samples.map(\.value) == [0.5])
        observations.record("disk", of: ExecCheck.Options.self, nil as [Perfdata]?)
        #expect(ExecCheck.Options.families(observations).allSatisfy { $0.samples.isEmpty }, "nil forgets a check's observation")
    }
}
