/// One check of weave-healthd's `/health` (application/health+json, IETF health-check draft).
struct CheckResult: Equatable {
    enum State: String, Comparable {
        case pass, warn, fail

        static func < (lhs: State, rhs: State) -> Bool { lhs.rank < rhs.rank }
        private var rank: Int { self == .pass ? 0 : self == .warn ? 1 : 2 }
    }

    var name: String
    var state: State
    var output: String?
    var observedValue: Double?
    var observedUnit: String?
}

/// The parsed `/health` document.
struct HealthDocument {
    var status: CheckResult.State
    var checks: [CheckResult]
    /// The document as received, for `--json`.
    var raw: [UInt8]

    init(_ body: [UInt8]) throws(ProbeError) {
        guard let json = JSONValue.parse(body) else { throw .badResponse("/health is not valid JSON") }
        guard let status = json["status"]?.string.flatMap(CheckResult.State.init(rawValue:)) else {
            throw .badResponse("/health has no status pass, warn or fail")
        }
        self.status = status
        raw = body
        checks = []
        if case .object(let members)? = json["checks"] {
            for (key, value) in members {
                guard case .array(let entries) = value, let entry = entries.first else { continue }
                let name = key.hasSuffix(":status") ? String(key.dropLast(7)) : key
                guard let state = entry["status"]?.string.flatMap(CheckResult.State.init(rawValue:)) else {
                    throw .badResponse("check \(name) has no status")
                }
                checks.append(CheckResult(name: name, state: state, output: entry["output"]?.string,
                                          observedValue: entry["observedValue"]?.number, observedUnit: entry["observedUnit"]?.string))
            }
        }
        checks.sort { $0.name < $1.name }
    }
}
