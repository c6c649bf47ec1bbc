import Logging
import WeavePrometheus
import WeaveSupport

/// Everything the daemon's `/metrics` shows: its own collectors' families, then the applications',
/// scraped at each `/metrics`, each series labelled with its `app`, admitted by `FamilyAdmission`,
/// then the textfile directory's (`Textfiles`), under names nothing before them renders.
/// The home of `weave_app_up`, `weave_app_scrape_duration_seconds`, `weave_app_info`,
/// `weave_app_dropped_families_total` and `weave_app_sockets_refused_total`. An application that is down has no series but those. The
/// daemon's families come first, so an application's family of the same name never gives them its
/// help or type, and one that would clash with them (or with another application's) is dropped,
/// counted and logged instead of vanishing.
struct DaemonExposition: MetricCollector {
    /// The daemon's own collectors, collected while the applications are asked.
    var own: [any MetricCollector] = []
    /// The current configuration's applications (a reload swaps them).
    let fleet: @Sendable () -> AppFleet
    /// The textfile directory, read with every scrape.
    var textfiles: Textfiles? = nil
    /// Dropped families by application and reason, and those already logged.
    let drops = DroppedFamilies()
    /// It waits on the applications.
    var waitsOnOthers: Bool { true }

    func collect() async -> [MetricFamily] { await collect(for: .openMetrics) }

    /// For a protobuf scrape the applications are asked for protobuf, so their native histograms reach it.
    func collect(for format: Exposition.Format) async -> [MetricFamily] {
        async let asked = fleet().scrape(native: format == .protobuf)
        async let read = textfiles?.read() ?? []
        let daemon = await CollectorRuns.collect(own)
        let scrapes = await asked
        let apps: [MetricFamily] = [
            .gauge("weave_app_up", "Whether the application's endpoint answered this scrape with a valid exposition (1) or not (0).",
                   scrapes.map { ([("app", $0.target.name)], $0.families == nil ? 0 : 1) }),
            .gauge("weave_app_scrape_duration_seconds", "How long reading the application's /metrics took in this scrape.",
                   unit: "seconds", scrapes.map { ([("app", $0.target.name)], $0.duration.totalSeconds) }),
            .gauge("weave_app_info", "The systemd unit that runs the application: named by its target, or the unit systemd says owns the process serving its socket.",
                   fleet().units().map { ([("app", $0.app), ("unit", $0.unit)], 1) }),
        ]
        let (families, dropped) = FamilyAdmission.admit(own: apps + daemon,
                                                        apps: scrapes.map { ($0.target.name, $0.families ?? []) }, native: format == .protobuf)
        drops.note(dropped)
        let files = await read
        let (withFiles, fileDrops) = FamilyAdmission.admitExclusive(after: families, sources: files.map { ($0.name, $0.families) })
        return withFiles + [drops.family(current: scrapes.map(\.target.name)), fleet().owners.family()]
            + (textfiles?.families(files, dropped: fileDrops) ?? [])
    }
}

/// What `FamilyAdmission` left out, counted per application and reason, each family logged once.
final class DroppedFamilies: Sendable {
    private let state = Locked<(counts: [String: [FamilyAdmission.Reason: Int]], logged: Set<String>)>(([:], []))
    private let logger = Logger(label: "weave.healthd.apps")
    /// Families logged at most, so an application that invents names cannot grow the set without bound.
    static let maxLogged = 10_000

    func note(_ dropped: [FamilyAdmission.Drop]) {
        let new = state.withLock { state -> [FamilyAdmission.Drop] in
            var new: [FamilyAdmission.Drop] = []
            for drop in dropped {
                state.counts[drop.source, default: [:]][drop.reason, default: 0] += 1
                let key = "\(drop.source)\u{0}\(drop.family)\u{0}\(drop.reason.rawValue)"
                if state.logged.count < Self.maxLogged, state.logged.insert(key).inserted { new.append(drop) }
            }
            return new
        }
        for drop in new {
            let why = drop.reason == .reserved ? "only weave-healthd may export a family of that name"
                : "a family before it (the daemon's or another application's) renders that name with another name or type "
                + "(in a protobuf scrape, a histogram with native buckets is of another type than one without)"
            logger.warning("Application \(drop.source)'s family \(drop.family) is left out of /metrics: \(why)",
                           metadata: ["app": "\(drop.source)", "family": "\(drop.family)", "reason": "\(drop.reason.rawValue)"])
        }
    }

    /// `weave_app_dropped_families_total` of the applications in `current` (those that left are forgotten).
    func family(current: [String]) -> MetricFamily {
        let counts = state.withLock { state in
            let keep = Set(current)
            state.counts = state.counts.filter { keep.contains($0.key) }
            return state.counts
        }
        var samples: [([(String, String)], Double)] = []
        for app in current.sorted() {
            for reason in FamilyAdmission.Reason.allCases {
                samples.append(([("app", app), ("reason", reason.rawValue)], Double(counts[app]?[reason] ?? 0)))
            }
        }
        return .counter("weave_app_dropped_families",
                        "Families of an application left out of a scrape: reserved (only the daemon may say it) or conflict (another name or type).",
                        samples)
    }
}
