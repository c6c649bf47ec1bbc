import WeaveSupport
import WeaveSystemd

/// What checks observed besides their status: a value for `/health`'s `observedValue`, Nagios
/// perfdata for the `weave_check_perfdata*` families, systemd units for `weave_systemd_unit_*`, and
/// https sessions for `weave_check_tls_*`.
/// Shared by the checks and the metrics source.
final class Observations: Sendable {
    private let values = Locked<[String: (value: Double, unit: String)]>([:])
    private let perfdata = Locked<[String: [Perfdata]]>([:])
    private let units = Locked<[String: SystemdUnit]>([:])
    private let sessions = Locked<[String: TLSFetch.Session]>([:])

    func record(_ check: String, value: Double, unit: String) {
        values.withLock { $0[check] = (value, unit) }
    }

    /// Keeps the first item of each label: a plugin that repeats a label must not make duplicate series.
    func record(_ check: String, perfdata items: [Perfdata]) {
        var seen: Set<String> = []
        let unique = items.filter { seen.insert($0.label).inserted }
        perfdata.withLock { $0[check] = unique }
    }

    func value(of check: String) -> (value: Double, unit: String)? {
        values.withLock { $0[check] }
    }

    /// Every perfdata item, by check.
    var allPerfdata: [String: [Perfdata]] {
        perfdata.withLock { $0 }
    }

    /// The unit a `systemd_unit` check last read; nil when it could not read it (no series then).
    func record(_ check: String, unit: SystemdUnit?) {
        units.withLock { $0[check] = unit }
    }

    /// Every unit last read, by check.
    var allUnits: [String: SystemdUnit] {
        units.withLock { $0 }
    }

    /// The TLS session an https check last established; nil when the handshake failed (no series then).
    func record(_ check: String, tls session: TLSFetch.Session?) {
        sessions.withLock { $0[check] = session }
    }

    /// Every https check's last session, by check.
    var allSessions: [String: TLSFetch.Session] {
        sessions.withLock { $0 }
    }
}
