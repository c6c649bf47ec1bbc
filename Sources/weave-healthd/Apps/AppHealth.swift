import WeaveHealth
import WeaveSupport

/// An application's `/health` (application/health+json), read into statuses: its aggregate and each
/// component's. The output is there only when the application shows details.
struct AppHealth: Sendable {
    let status: HealthStatus
    let components: [(name: String, status: HealthStatus)]

    init(_ body: [UInt8], status code: Int) throws(FetchFailure) {
        guard let json = JSONValue.parse(body) else {
            throw FetchFailure("/health (HTTP \(code)) is not valid JSON")
        }
        guard let word = json["status"]?.string, let state = HealthState(ietfStatus: word) else {
            throw FetchFailure("/health (HTTP \(code)) has no status pass, warn or fail")
        }
        status = Self.status(state, output: json["output"]?.string, otherwise: "the application reports \(word)")
        var components: [(String, HealthStatus)] = []
        if case .object(let members)? = json["checks"] {
            for (key, value) in members.prefix(AppFleet.maxComponents) {
                let name = key.hasSuffix(":status") ? String(key.dropLast(":status".count)) : key
                guard case .array(let entries) = value, let entry = entries.first, let word = entry["status"]?.string,
                      let state = HealthState(ietfStatus: word) else {
                    throw FetchFailure("/health: component \(JSONText.quoted(name)) has no status pass, warn or fail")
                }
                guard Self.isPrintable(name) else { throw FetchFailure("/health: a component's name has control characters") }
                components.append((name, Self.status(state, output: entry["output"]?.string, otherwise: "\(word) (no details shown)")))
            }
        }
        self.components = components.sorted { $0.0 < $1.0 }
    }

    private static func status(_ state: HealthState, output: String?, otherwise: String) -> HealthStatus {
        switch state {
        case .healthy: return .healthy
        case .degraded: return .degraded(reason: output ?? otherwise)
        case .unhealthy: return .unhealthy(error: FetchFailure(output ?? otherwise))
        }
    }

    private static func isPrintable(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256 && name.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
    }
}
