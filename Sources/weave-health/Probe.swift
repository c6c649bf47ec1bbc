import WeaveHealth
import WeaveReaders
import WeaveSupport

/// One probe: asks the daemon what `options` says, prints the answer in the chosen output, and
/// returns the exit status.
enum Probe {
    static func run(_ options: ProbeOptions, target: ProbeTarget, color: Bool) -> Int32 {
        let clock = ContinuousClock()
        let start = clock.now
        let http = HTTPProbe(target: target, connectTimeout: options.connectTimeout, deadline: start + options.timeout)
        do {
            let (report, document) = try ask(http, options.mode, target: target, start: start)
            return finish(report, document: document, options, color: color)
        } catch .unknownChecks(let names, let known) {
            // A usage error: 64 (EX_USAGE), or UNKNOWN for Nagios; never "unhealthy".
            write("weave-health: \(ProbeError.unknownChecks(names, known: known))\n", to: 2)
            return options.output == .nagios ? 3 : 64
        } catch {
            let elapsed = clock.now - start
            // Nagios: a bad answer is UNKNOWN; no answer at all (unreachable, timed out) is CRITICAL.
            let nagiosCode: Int32 = if case .badResponse = error { 3 } else { 2 }
            switch options.output {
            case .quiet: break
            case .human: write("unhealthy: \(error) (\(target))\n", to: 1)
            case .json:
                write("{\"status\":\"fail\",\"output\":\(JSONText.quoted(error.description)),\(probeJSON(target, elapsed, exitCode: 1))}\n", to: 1)
            case .nagios:
                write("WEAVE HEALTH \(nagiosCode == 3 ? "UNKNOWN" : "CRITICAL") - \(error) (\(target)) | 'time'=\(ProbeReport.decimal(elapsed.totalSeconds))s;;;0;\n", to: 1)
            }
            return options.output == .nagios ? nagiosCode : 1
        }
    }

    private static func ask(_ http: HTTPProbe, _ mode: ProbeOptions.Mode, target: ProbeTarget,
                            start: ContinuousClock.Instant) throws(ProbeError) -> (ProbeReport, HealthDocument?) {
        func report(_ state: HealthState, _ checks: [CheckResult], summary: String? = nil) -> ProbeReport {
            ProbeReport(state: state, checks: checks, summary: summary ?? ProbeReport.summarize(state, checks), target: target,
                        elapsed: ContinuousClock.now - start)
        }
        switch mode {
        case .connectOnly:
            try http.connectOnly()
            return (report(.healthy, [], summary: "accepts connections"), nil)
        case .live, .ready:
            let path = mode == .live ? "/livez?verbose" : "/readyz?verbose"
            let reply = try http.get(path, accept: "text/plain")
            guard reply.status == 200 || reply.status == 503 else { throw .badResponse("HTTP \(reply.status) from \(path)") }
            var checks: [CheckResult] = []
            for line in String(decoding: reply.body, as: UTF8.self).split(separator: "\n") {
                guard line.hasPrefix("[+]") || line.hasPrefix("[-]") else { continue }
                let words = line.dropFirst(3).split(separator: " ", maxSplits: 1)
                guard let name = words.first else { continue }
                checks.append(CheckResult(name: String(name), state: line.hasPrefix("[+]") ? .healthy : .unhealthy,
                                          output: line.hasPrefix("[-]") && words.count > 1 ? String(words[1]) : nil))
            }
            let state: HealthState = reply.status == 200 ? .healthy : .unhealthy
            return (report(state, checks, summary: "\(mode == .live ? "live" : "ready"): " + ProbeReport.summarize(state, checks)), nil)
        case .overall, .checks:
            let reply = try http.get("/health", accept: "application/health+json")
            guard reply.header("Content-Type")?.hasPrefix("application/health+json") == true || reply.status == 200 || reply.status == 503 else {
                throw .badResponse("HTTP \(reply.status) from /health")
            }
            let document = try HealthDocument(reply.body)
            // Fail closed: an answer whose HTTP status is not a success is never healthy, whatever its body says.
            let success = (200..<300).contains(reply.status)
            guard case .checks(let names) = mode else {
                guard success || document.status == .unhealthy else {
                    return (report(.unhealthy, document.checks, summary: "HTTP \(reply.status) with a body that says \(document.status.rawValue)"), document)
                }
                return (report(document.status, document.checks), document)
            }
            let unknown = names.filter { name in !document.checks.contains { $0.name == name } }
            guard unknown.isEmpty else { throw .unknownChecks(unknown, known: document.checks.map(\.name)) }
            let selected = names.compactMap { name in document.checks.first { $0.name == name } }
            return (report(selected.map(\.state).max() ?? .healthy, selected), document)
        }
    }

    private static func finish(_ report: ProbeReport, document: HealthDocument?, _ options: ProbeOptions, color: Bool) -> Int32 {
        let code = options.output == .nagios ? report.nagiosCode : report.exitCode(strict: options.strict)
        switch options.output {
        case .quiet: break
        case .human: write(report.humanText(color: color), to: 1)
        case .nagios: write(report.nagiosText, to: 1)
        case .json: write(json(report, document, exitCode: code) + "\n", to: 1)
        }
        return code
    }

    /// The daemon's document with `"probe": {…}` added, or for --live/--ready/--connect-only a
    /// document of the same shape built from the report.
    static func json(_ report: ProbeReport, _ document: HealthDocument?, exitCode: Int32) -> String {
        let probe = probeJSON(report.target, report.elapsed, exitCode: exitCode)
        if let document {
            var text = String(decoding: document.raw, as: UTF8.self).trimmingWhitespace()
            if text.hasSuffix("}") {
                text.removeLast()
                return text + (text.trimmingWhitespace().hasSuffix("{") ? "" : ",") + probe + "}"
            }
        }
        let checks = report.checks.map { "\(JSONText.quoted($0.name + ":status")):[{\"status\":\"\($0.state.ietfStatus)\"}]" }
        return "{\"status\":\"\(report.state.ietfStatus)\",\"output\":\(JSONText.quoted(report.summary)),\"checks\":{\(checks.joined(separator: ","))},\(probe)}"
    }

    static func probeJSON(_ target: ProbeTarget, _ elapsed: Duration, exitCode: Int32) -> String {
        "\"probe\":{\"target\":\(JSONText.quoted(target.description)),\"durationSeconds\":\(ProbeReport.decimal(elapsed.totalSeconds)),\"exitCode\":\(exitCode)}"
    }
}
