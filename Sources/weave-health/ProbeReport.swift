import WeaveHealth
import WeaveSupport

/// What a probe found, and how each output mode says it.
struct ProbeReport {
    /// The verdict over what was asked (the whole daemon, or the named checks).
    var state: HealthState
    /// The checks shown, one line each.
    var checks: [CheckResult]
    /// A one-line summary for people, e.g. "1 of 12 unhealthy: disk-root (3% free)".
    var summary: String
    var target: ProbeTarget
    var elapsed: Duration

    /// Docker/Kubernetes: 0 for pass and warn (warn is 1 with `strict`), 1 otherwise.
    func exitCode(strict: Bool) -> Int32 {
        switch state {
        case .healthy: 0
        case .degraded: strict ? 1 : 0
        case .unhealthy: 1
        }
    }

    static func summarize(_ state: HealthState, _ checks: [CheckResult]) -> String {
        let failing = checks.filter { $0.state == .unhealthy }
        let warning = checks.filter { $0.state == .degraded }
        func names(_ list: [CheckResult]) -> String {
            list.map { check in check.output.map { "\(check.name) (\($0))" } ?? check.name }.joined(separator: ", ")
        }
        var parts: [String] = []
        if !failing.isEmpty { parts.append("\(failing.count) of \(checks.count) unhealthy: \(names(failing))") }
        if !warning.isEmpty { parts.append("\(warning.count) of \(checks.count) degraded: \(names(warning))") }
        if parts.isEmpty {
            return checks.isEmpty ? "daemon \(state.rawValue)"
                : "\(checks.count) of \(checks.count) healthy"
        }
        return parts.joined(separator: "; ")
    }

    // MARK: Nagios

    var nagiosCode: Int32 { state.nagiosCode }

    /// `WEAVE HEALTH CRITICAL - 1 of 12 unhealthy: … | 'disk-root'=3%;;;0;100 'time'=0.004s;;;0;`
    /// then one line per check (long output).
    var nagiosText: String {
        var perfdata = checks.compactMap(Self.perfdata)
        perfdata.append("'time'=\(Self.decimal(elapsed.totalSeconds))s;;;0;")
        var text = "WEAVE HEALTH \(state.nagiosLabel) - \(summary) | \(perfdata.joined(separator: " "))\n"
        for check in checks {
            text += "[\(check.state.nagiosLabel)] \(check.name)"
            if let output = check.output { text += ": \(output)" }
            text += "\n"
        }
        return text
    }

    /// A check's observed value as Nagios perfdata, in the units Nagios knows (%, s; others unitless).
    static func perfdata(_ check: CheckResult) -> String? {
        guard let value = check.observedValue, value.isFinite else { return nil }
        let label = "'" + check.name.replacing("'", with: "''").replacing("=", with: "_") + "'"
        switch check.observedUnit {
        case "%": return "\(label)=\(decimal(value))%;;;0;100"
        case "s": return "\(label)=\(decimal(value))s;;;0;"
        default: return "\(label)=\(decimal(value));;;;"
        }
    }

    static func decimal(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = String(value)
        return text.contains("e") ? Int64(checked: value.rounded()).map(String.init) ?? text : text
    }

    // MARK: People

    /// An observed value for people: a duration in its own scale (`688.8µs`, `1.2s`), a percentage or
    /// another unit as the daemon gave it.
    static func humanValue(_ value: Double, unit: String?) -> String {
        switch unit {
        case "s": return MetricsTable.duration(value)
        case "%": return decimal(value) + "%"
        case let unit?: return decimal(value) + " " + unit
        case nil: return decimal(value)
        }
    }

    /// One line per check, coloured when `color`.
    func humanText(color: Bool) -> String {
        func paint(_ text: String, _ state: HealthState) -> String { color ? state.paint(text) : text }
        var text = "\(paint(state.rawValue, state)): \(summary) (\(target), \(Self.decimal((elapsed.totalSeconds * 10_000).rounded() / 10)) ms)\n"
        let width = checks.map(\.name.count).max() ?? 0
        for check in checks {
            let mark = check.state == .healthy ? "✔" : check.state == .degraded ? "!" : "✘"
            var line = "  \(paint(mark, check.state)) \(check.name.padding(to: width))  \(paint(check.state.rawValue.padding(to: 9), check.state))"
            if let value = check.observedValue { line += "  " + Self.humanValue(value, unit: check.observedUnit) }
            if let output = check.output { line += "  \(output)" }
            text += line.trimmingWhitespace() + "\n"
        }
        return text
    }
}

extension String {
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
