import WeavePrometheus

/// Which of the applications' families join the daemon's in one exposition. One exposition cannot
/// carry two types under one name, nor a family whose lines another family's would repeat (a
/// histogram `x` and a gauge `x_count`; a counter `x` and a gauge `x_total`): a Prometheus server
/// rejects the whole scrape for it, or keeps the first and loses the other's series in silence.
///
/// The policy: the daemon's own families come first and always stay. An application's family is
/// dropped, never merged, when
/// - its name is one only the daemon may say (`reservedPrefixes`): reason `reserved`, so no
///   application can forge the daemon's state or its alerts;
/// - a name it would render is one a family before it renders, under another name or type (the
///   daemon's, an application's that sorts before it, or its own): reason `conflict`. In a
///   `native` exposition (protobuf) a histogram with native buckets and one without are of two
///   types: Prometheus takes a family's kind from its first series, and would turn the native
///   histograms after a classic one into `_count`, `_sum` and `+Inf`.
/// A family of the same name and type as one before it merges with it: the applications'
/// `weave_resolutions_total` and the daemon's are one family. Dropped families are counted and
/// logged by `DaemonExposition`, so nothing vanishes without a trace.
enum FamilyAdmission {
    /// Why a family was left out.
    enum Reason: String, Sendable, CaseIterable {
        case reserved, conflict
    }

    /// One family left out.
    struct Drop: Sendable, Equatable {
        /// The application (or the textfile) it came from.
        let source: String
        let family: String
        let reason: Reason
    }

    /// The prefixes of the families only the daemon may say, one per kind of daemon-only collector:
    /// the applications (`DaemonExposition`), reloads, the journal writer, the textfile directory,
    /// the collectors' runs, and each check type with metrics of its own (its `familyPrefix`: TLS,
    /// perfdata, systemd units). A test renders every daemon-only collector and fails on a family
    /// outside them, so a new collector cannot leave its names open. (Not `weave_check_` whole:
    /// `weave_check_last_success_timestamp_seconds` is every container's.)
    static let reservedPrefixes = ["weave_app_", "weave_config_", "weave_log_", "weave_textfile_", "weave_scrape_collector_"]
        + CheckTypes.withMetrics.map { $0.familyPrefix }

    /// `own` (the daemon's families, kept whole) and the families of `apps` that may join them, in
    /// that order, with what was left out. An application's families are taken in its order, and
    /// the applications in theirs, so the first to claim a name keeps it.
    static func admit(own: [MetricFamily], apps: [(app: String, families: [MetricFamily])],
                      native: Bool = false) -> (families: [MetricFamily], dropped: [Drop]) {
        /// Every name a family's lines may carry, with the family that claimed it (and whether it
        /// has native buckets, in a native exposition, once a family of that name has a series).
        var claims: [String: (name: String, kind: MetricFamily.Kind, native: Bool?)] = [:]
        func isNative(_ family: MetricFamily) -> Bool? {
            guard native, family.kind == .histogram else { return false }
            if family.histograms.contains(where: { $0.native != nil }) { return true }
            return family.histograms.isEmpty && family.preformatted.count == 0 ? nil : false
        }
        func claim(_ family: MetricFamily) {
            for name in renderedNames(family) {
                if claims[name] == nil { claims[name] = (family.name, family.kind, isNative(family)) }
                if claims[name]?.native == nil { claims[name]?.native = isNative(family) }
            }
        }
        for family in own { claim(family) }
        var admitted = own
        var dropped: [Drop] = []
        for (app, families) in apps {
            for family in families {
                if reservedPrefixes.contains(where: { family.name.hasPrefix($0) }) {
                    dropped.append(Drop(source: app, family: family.name, reason: .reserved))
                    continue
                }
                let clashes = renderedNames(family).contains { name in
                    guard let owner = claims[name] else { return false }
                    guard owner.name == family.name, owner.kind == family.kind else { return true }
                    guard let claimed = owner.native, let this = isNative(family) else { return false }
                    return claimed != this
                }
                if clashes {
                    dropped.append(Drop(source: app, family: family.name, reason: .conflict))
                    continue
                }
                claim(family)
                admitted.append(family)
            }
        }
        return (admitted, dropped)
    }

    /// `admitted` (kept whole) and the families of `sources` (textfiles) that may join them: only
    /// under names no family before them renders, and never `weave_*` (the daemon's and the
    /// applications' vocabulary). A source's family never merges with another's, since nothing (no
    /// `app` label) would tell their series apart.
    static func admitExclusive(after admitted: [MetricFamily], sources: [(source: String, families: [MetricFamily])])
        -> (families: [MetricFamily], dropped: [Drop]) {
        var claimed = Set(admitted.flatMap(renderedNames))
        var families = admitted
        var dropped: [Drop] = []
        for (source, list) in sources {
            for family in list {
                if family.name.hasPrefix("weave_") {
                    dropped.append(Drop(source: source, family: family.name, reason: .reserved))
                    continue
                }
                let names = renderedNames(family)
                if names.contains(where: claimed.contains) {
                    dropped.append(Drop(source: source, family: family.name, reason: .conflict))
                    continue
                }
                claimed.formUnion(names)
                families.append(family)
            }
        }
        return (families, dropped)
    }

    /// The names a family's lines carry in either format (its own name too: a TYPE line's).
    static func renderedNames(_ family: MetricFamily) -> [String] {
        let name = family.name
        switch family.kind {
        case .gauge: return [name]
        case .counter: return [name, name + "_total", name + "_created"]
        case .histogram: return [name, name + "_bucket", name + "_sum", name + "_count", name + "_created"]
        case .summary: return [name, name + "_sum", name + "_count", name + "_created"]
        }
    }
}
