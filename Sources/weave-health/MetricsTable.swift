import WeaveHealth
import WeavePrometheus
import WeaveSupport

/// `weave-health top`: the slowest services by resolve time, from a `/metrics` text exposition.
struct MetricsTable {
    struct Row: Equatable {
        var service: String
        var resolutions: Double = 0
        var errors: Double = 0
        var slow: Double = 0
        var p50: Double?
        var p99: Double?
        var health: String?
    }

    var rows: [Row]
    /// The applications the daemon reports down (`weave_app_up` 0): their series are absent, so
    /// they would otherwise not be listed at all.
    var downApps: [String] = []

    /// Reads the weave_* families of a Prometheus text exposition (0.0.4 or OpenMetrics), checked by
    /// the daemon's own parser: an exposition Prometheus would reject is refused whole. From a daemon
    /// that aggregates applications, a service is `<app>/<service>`, and the daemon's own (its check
    /// objects, without an `app` label) are left out unless `includeOwn`. Parsing stops at `deadline`.
    init(exposition: [UInt8], includeOwn: Bool = false, deadline: ContinuousClock.Instant? = nil) throws(ExpositionParser.Failure) {
        var byService: [String: Row] = [:]
        var buckets: [String: [Double: Double]] = [:] // service → le → cumulative count (paths summed)
        // service → the quantiles its process computed from its finer buckets (within 4.5 %), preferred
        var quantiles: [String: (p50: Double?, p99: Double?)] = [:]
        func row(_ service: String) -> Row { byService[service] ?? Row(service: service) }
        var own: Set<String> = [] // services without an `app` label: the daemon's own, when others have one
        var aggregated = false
        // Any number of labels (the daemon relays an application's 128 and adds `app`): their
        // repeats are found in linear time, and the deadline bounds the rest.
        let limits = ParseLimits(labels: Int(Int16.max), deadline: deadline)
        let families = try ExpositionParser.parse(exposition, limits: limits).filter { $0.name.hasPrefix("weave_") }
        for sample in families.flatMap(\.preformatted.samples) {
            // What the table shows comes from the labels: none of their bytes may reach the terminal as is.
            let labels = sample.labels.mapValues(\.printable)
            if sample.name == "weave_app_up", sample.value == 0, let app = labels["app"] { downApps.append(app) }
            guard var service = labels["dependency"] ?? labels["check"] else { continue }
            if let app = labels["app"] {
                service = app + "/" + service
                aggregated = true
            } else {
                own.insert(service)
            }
            var current = row(service)
            switch sample.name {
            case "weave_resolutions_total", "weave_resolutions": current.resolutions += sample.value
            case "weave_resolution_errors_total", "weave_resolution_errors": current.errors += sample.value
            case "weave_slow_resolutions_total", "weave_slow_resolutions": current.slow += sample.value
            case "weave_health_status" where sample.value == 1: current.health = labels["state"]
            case "weave_resolve_latency_seconds":
                switch labels["quantile"] {
                case "0.5": quantiles[service, default: (nil, nil)].p50 = sample.value
                case "0.99": quantiles[service, default: (nil, nil)].p99 = sample.value
                default: continue
                }
            case "weave_resolve_duration_seconds_bucket":
                guard let le = labels["le"].flatMap({ $0 == "+Inf" ? Double.infinity : Double($0) }) else { continue }
                buckets[service, default: [:]][le, default: 0] += sample.value
            default: continue
            }
            byService[service] = current
        }
        if aggregated && !includeOwn {
            for service in own {
                byService[service] = nil
                buckets[service] = nil
            }
        }
        // A service never resolved (its one factory run was a health check's creation) shows no
        // resolve latency: "-", not the creation's time as if it were a resolve's.
        for (service, cumulative) in buckets where byService[service]?.resolutions ?? 0 > 0 {
            let sorted = cumulative.sorted { $0.key < $1.key }
            byService[service]?.p50 = quantiles[service]?.p50 ?? Self.quantile(0.5, sorted)
            byService[service]?.p99 = quantiles[service]?.p99 ?? Self.quantile(0.99, sorted)
        }
        // Health is keyed by check name, statistics by registration ("disk-root (HealthCheckable)"):
        // a check's health joins the row of the registration with its name.
        for (service, row) in byService where row.health != nil && row.resolutions == 0 {
            let registrations = byService.keys.filter { $0.hasPrefix(service + " (") }
            guard registrations.count == 1, let registration = registrations.first else { continue }
            byService[registration]?.health = row.health
            byService[service] = nil
        }
        rows = byService.values.sorted {
            ($0.p99 ?? -1, $0.errors, $1.service) > ($1.p99 ?? -1, $1.errors, $0.service)
        }
    }

    /// The `q` quantile of cumulative buckets, interpolated linearly inside its bucket (as
    /// Prometheus's histogram_quantile does); nil without observations. For a source that exports no
    /// `weave_resolve_latency_seconds` (an older application).
    static func quantile(_ q: Double, _ buckets: [(key: Double, value: Double)]) -> Double? {
        guard let total = buckets.last?.value, total > 0 else { return nil }
        let rank = q * total
        var previous = (le: 0.0, count: 0.0)
        for (le, count) in buckets {
            if count >= rank {
                if le.isInfinite { return previous.le }
                let inBucket = count - previous.count
                return inBucket > 0 ? previous.le + (le - previous.le) * (rank - previous.count) / inBucket : le
            }
            previous = (le, count)
        }
        return previous.le
    }

    /// The applications that are down first, each with its reason (`reasons`, from `/health`),
    /// then a fixed-width table, slowest first, at most `limit` rows; coloured health when `color`.
    func render(source: String, limit: Int, color: Bool, reasons: [String: String] = [:]) -> String {
        let unhealthy = rows.filter { $0.health == "unhealthy" }.count
        let degraded = rows.filter { $0.health == "degraded" }.count
        var text = "weave-health top - \(source) - \(rows.count) services"
        if !downApps.isEmpty { text += ", \(downApps.count) application\(downApps.count == 1 ? "" : "s") down" }
        if unhealthy + degraded > 0 { text += ", \(unhealthy) unhealthy, \(degraded) degraded" }
        text += "\n\n"
        for app in downApps.sorted() {
            let down = color ? HealthState.unhealthy.paint("DOWN") : "DOWN"
            text += "\(down)  \(app)  \(reasons[app]?.printable ?? "(see weave-health --check \(app))")\n"
        }
        if !downApps.isEmpty { text += "\n" }
        let shown = rows.prefix(limit)
        let width = max(7, shown.map(\.service.count).max() ?? 0)
        text += "SERVICE".padding(to: width) + "  " + ["RESOLVES", "P50", "P99", "ERRORS", "SLOW"].map { $0.leftPadded(to: 9) }.joined(separator: " ")
            + "  HEALTH\n"
        for row in shown {
            let figures = [Self.count(row.resolutions), Self.duration(row.p50), Self.duration(row.p99), Self.count(row.errors), Self.count(row.slow)]
            var health = row.health ?? "-"
            if color, let state = row.health { health = (HealthState(rawValue: state) ?? .unhealthy).paint(state) }
            text += row.service.padding(to: width) + "  " + figures.map { $0.leftPadded(to: 9) }.joined(separator: " ") + "  \(health)\n"
        }
        if rows.count > limit { text += "… \(rows.count - limit) more (--limit)\n" }
        return text
    }

    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return seconds.map { "\($0)s" } ?? "-" }
        switch seconds {
        case ..<1e-6: return "\(Int((seconds * 1e9).rounded()))ns"
        case ..<1e-3: return "\(oneDecimal(seconds * 1e6))µs"
        case ..<1: return "\(oneDecimal(seconds * 1e3))ms"
        default: return "\(oneDecimal(seconds))s"
        }
    }

    static func count(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 1e15 else { return "\(value)" } // whatever the exposition said
        switch value {
        case ..<10_000: return String(Int64(value))
        case ..<10_000_000: return "\(oneDecimal(value / 1e3))k"
        default: return "\(oneDecimal(value / 1e6))M"
        }
    }

    private static func oneDecimal(_ value: Double) -> String {
        guard let tenths = Int64(checked: (value * 10).rounded()) else { return "\(value)" }
        return "\(tenths / 10).\(tenths % 10)"
    }
}

extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }

    /// Safe to print on one line of a terminal or of Nagios output: `logSafe`, the rule of the
    /// daemon's log lines too (control and invisible characters, so escape sequences, line breaks
    /// and bidi overrides, become `\u{1B}`), and `|`, which starts Nagios perfdata, becomes `¦`.
    /// What a daemon reports can then neither move the cursor, reorder text, nor add lines or perfdata.
    var printable: String {
        let safe = logSafe
        return safe.contains("|") ? String(safe.map { $0 == "|" ? "¦" : $0 }) : safe
    }
}
