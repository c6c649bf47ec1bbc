import WeaveHealth
import WeaveSupport

// The fleet's state: what it knows of each application, and what it shows of them.
extension AppFleet {
    /// What the daemon knows of one application.
    struct AppState: Sendable {
        var target: AppTarget
        /// Why each of its endpoints (`/metrics`, `/health`) failed when last asked; empty when they
        /// answered. It is up when none fails: an application whose `/health` answers and whose
        /// `/metrics` does not is down until both answer, not up and down in turn.
        var failing: [String: String] = [:]
        /// Whether it was asked at all.
        var asked = false
        /// Whether its last request, whatever the path, got an HTTP answer (nothing did when it is
        /// killed, hangs or refuses): without one, its last `/health` is no longer its news.
        var answering = true
        /// The process that served its socket when last asked (`SO_PEERCRED`).
        var pid: Int32?
        /// The systemd unit that owns `pid`, as systemd said (`GetUnitByPID`), and the process it was
        /// asked for: asked again when another process serves the socket.
        var unit: String?
        var unitAskedFor: Int32?
        /// When its discovered socket was first found gone while its process still ran.
        var vanishedAt: Duration?
        /// When its discovered socket was first found gone with its process ended, outside a systemd
        /// service: it left unless a socket of its name is back within `leavingGrace` (a restart by
        /// hand, by Docker or supervisord: its new run is one "restarted", #66).
        var goneAt: Duration?

        /// Whether it answered; nil before it was asked.
        var reachable: Bool? { asked ? failing.isEmpty : nil }
        /// When the daemon first found it down (its clock: the application says nothing meanwhile),
        /// and the endpoint whose failure did; nil while it is up.
        var downSince: Double?
        var downPath: String?
        /// When it was last asked anything.
        var askedAt: Double = 0
        /// Why it is down: the failure that took it down while that endpoint still fails, else the
        /// first of the others, so one reason shows at a time and does not alternate.
        var reason: String? {
            guard !failing.isEmpty else { return nil }
            return downPath.flatMap { failing[$0] } ?? failing.min { $0.key < $1.key }?.value
        }
        /// Whether its `/health` could not be read, or it answers nothing at all: its components are
        /// then down with it (an invalid `/metrics` alone leaves them as its `/health` says).
        var healthUnread: Bool { failing["/health"] != nil || status == nil || !answering }
        /// Its last `/health`: the application's aggregate state, and each component's state and output.
        var status: HealthStatus?
        var components: [AppHealth.Component] = []
        var checkedAt: Double = 0
        /// Its last `/dependencies`, for the status page; nil before the first, or when it has none.
        var dependencies: AppDependencies?
    }

    /// What the status page shows of one application.
    struct AppView: Sendable {
        let name: String
        let address: String
        /// Nil before its first answer.
        let reachable: Bool?
        let reason: String?
        let dependencies: AppDependencies?
    }

    /// The applications whose every endpoint answered when last asked, with their targets: those a
    /// watch is started for (one that refuses, hangs or is stale is polled, and costs a round nothing).
    func answering() -> [AppTarget] {
        states.withLock { states in states.values.filter { $0.reachable == true }.map(\.target) }
    }

    /// The target of the application `name` as last asked; nil once the fleet forgot it (it left).
    func target(named name: String) -> AppTarget? {
        states.withLock { $0[name]?.target }
    }

    /// Every application the fleet knows, by name.
    func views() -> [AppView] {
        states.withLock { states in
            states.values.map { AppView(name: $0.target.name, address: "\($0.target.address)", reachable: $0.reachable,
                                        reason: $0.reason, dependencies: $0.dependencies) }
        }.sorted { $0.name < $1.name }
    }

    /// Every application as health records: `<app>` (its own aggregate, or unhealthy when unreachable)
    /// and `<app>/<check>` for each component it last reported (unhealthy while it is unreachable).
    func healthRecords() -> [HealthCheckRecord] {
        let states = self.states.withLock { $0 }
        var records: [HealthCheckRecord] = []
        for state in states.values {
            // Reachable but not yet read is no news either way.
            guard let reachable = state.reachable, !reachable || state.status != nil else { continue }
            let down = HealthStatus.unhealthy(error: FetchFailure("\(state.target.name) is down: \(state.reason ?? "no answer")"))
            let unread = state.healthUnread
            // Read: the application's own times where it says them (one time per transition
            // everywhere), never later than the read that saw them. Down: the daemon's, from the
            // request that found it so to the last one asked.
            let readAt = state.checkedAt > 0 ? state.checkedAt : WallClock.now()
            func record(_ name: String, _ status: HealthStatus, changedAt: Double?, checkedAt: Double?) -> HealthCheckRecord {
                let checked = unread ? max(state.askedAt, readAt) : checkedAt.map { min(max($0, 0), readAt) } ?? readAt
                let changed = unread ? state.downSince ?? checked : changedAt.map { min(max($0, 0), checked) } ?? checked
                return HealthCheckRecord(name: name, status: status, lastResult: status, changedAt: changed, checkedAt: checked, lastDuration: .zero,
                                  consecutiveFailures: status.state == .unhealthy ? 1 : 0, consecutiveSuccesses: status.state == .healthy ? 1 : 0,
                                  groups: [HealthCheckSettings.application])
            }
            records.append(record(state.target.name, reachable ? state.status! : down,
                                  changedAt: state.components.compactMap(\.changedAt).max(),
                                  checkedAt: state.components.compactMap(\.checkedAt).max()))
            // Its components as it reported them, unless its /health itself cannot be read.
            for component in state.components {
                records.append(record(state.target.name + "/" + component.name, unread ? down : component.status,
                                      changedAt: component.changedAt, checkedAt: component.checkedAt))
            }
        }
        return records
    }
}
