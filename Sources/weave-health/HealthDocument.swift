import WeaveHealth
import WeaveSupport

/// How the probe shows a health state: Nagios codes and labels, terminal colours.
extension HealthState {
    /// Nagios plugin states: 0 OK, 1 WARNING, 2 CRITICAL (3 UNKNOWN is for errors).
    var nagiosCode: Int32 { self == .healthy ? 0 : self == .degraded ? 1 : 2 }
    var nagiosLabel: String { ["OK", "WARNING", "CRITICAL"][Int(nagiosCode)] }

    /// `text` in this state's terminal colour: green, yellow, red.
    func paint(_ text: String) -> String {
        ["\u{1B}[32m", "\u{1B}[33m", "\u{1B}[31m"][Int(nagiosCode)] + text + "\u{1B}[0m"
    }
}

/// One check of weave-healthd's `/health` (application/health+json, IETF health-check draft).
struct CheckResult: Equatable {
    var name: String
    var state: HealthState
    var output: String?
    var observedValue: Double?
    var observedUnit: String?
}

/// The parsed `/health` document.
struct HealthDocument {
    var status: HealthState
    var checks: [CheckResult]
    /// The document as received, for `--json`.
    var raw: [UInt8]

    init(_ body: [UInt8]) throws(ProbeError) {
        guard let document = HealthJSON(body) else { throw .badResponse("/health is not valid JSON, or gives a key twice") }
        guard let status = document.status.flatMap(HealthState.init(ietfStatus:)) else {
            throw .badResponse("/health has no status pass, warn or fail")
        }
        self.status = status
        raw = body
        checks = []
        for check in document.checks where check.hasEntry {
            let name = check.name.printable
            guard let state = check.status.flatMap(HealthState.init(ietfStatus:)) else {
                throw .badResponse("check \(name) has no status")
            }
            checks.append(CheckResult(name: name, state: state, output: check.output?.printable,
                                      observedValue: check.observedValue, observedUnit: check.observedUnit?.printable))
        }
        checks.sort { $0.name < $1.name }
    }
}
