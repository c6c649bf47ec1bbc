import WeaveHealth
import WeaveSupport

/// An application's `/health` (application/health+json), read into statuses: its aggregate and each
/// component's. The output is there only when the application shows details.
struct AppHealth: Sendable {
    /// One of its checks, with the application's own times (nil where it does not say them).
    struct Component: Sendable {
        let name: String
        let status: HealthStatus
        /// When its state began.
        let changedAt: Double?
        /// When it last ran: what "checked … ago" counts from, not when the daemon read it.
        let checkedAt: Double?
    }

    let status: HealthStatus
    let components: [Component]
    /// The bytes its components' names and reasons keep.
    var keptBytes: Int {
        components.reduce(0) { $0 + $1.name.utf8.count + ($1.status.reason?.utf8.count ?? 0) }
    }
    /// A component's reason kept at most; a longer one is cut, with "…".
    static let maxOutputBytes = 1_024

    init(_ body: [UInt8], status code: Int) throws(FetchFailure) {
        guard let document = HealthJSON(body) else {
            throw FetchFailure("/health (HTTP \(code)) is not valid JSON, or gives a key twice")
        }
        guard let word = document.status, let state = HealthState(ietfStatus: word) else {
            throw FetchFailure("/health (HTTP \(code)) has no status pass, warn or fail")
        }
        status = Self.status(state, output: document.output, otherwise: "the application reports \(word)")
        var components: [Component] = []
        for check in document.checks.prefix(AppFleet.maxComponents) {
            guard check.hasEntry, let word = check.status, let state = HealthState(ietfStatus: word) else {
                throw FetchFailure("/health: component \(JSONText.quoted(check.name)) has no status pass, warn or fail")
            }
            guard Self.isPrintable(check.name) else { throw FetchFailure("/health: a component's name has control characters") }
            components.append(Component(name: check.name, status: Self.status(state, output: check.output, otherwise: "\(word) (no details shown)"),
                                        changedAt: check.changedAt, checkedAt: check.time))
        }
        self.components = components.sorted { $0.name < $1.name }
    }

    private static func status(_ state: HealthState, output: String?, otherwise: String) -> HealthStatus {
        let output = output.map { $0.prefix(maxUTF8Bytes: maxOutputBytes) }
        switch state {
        case .healthy: return .healthy
        case .degraded: return .degraded(reason: output ?? otherwise)
        case .unhealthy: return .unhealthy(error: FetchFailure(output ?? otherwise))
        }
    }

    /// A name of at most 256 bytes without a control character (C1 included); invisible ones are
    /// kept, and escaped wherever the name is shown (`logSafe`).
    private static func isPrintable(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256 && !name.unicodeScalars.contains(where: \.isControl)
    }
}
