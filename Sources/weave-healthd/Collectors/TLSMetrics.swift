import WeavePrometheus

/// The TLS sessions of the current runtime's https checks, `{check}`: the earliest certificate
/// expiry of the chain the server sent (blackbox_exporter's `probe_ssl_earliest_cert_expiry`), the
/// TLS version, and whether the chain verified.
struct TLSMetrics: MetricCollector {
    let source: DaemonSource

    func collect() async -> [MetricFamily] {
        var expiry: [([(String, String)], Double)] = []
        var version: [([(String, String)], Double)] = []
        var verified: [([(String, String)], Double)] = []
        for (check, session) in source.runtime.observations.allSessions.sorted(by: { $0.key < $1.key }) {
            if let earliest = session.earliestExpiry { expiry.append(([("check", check)], earliest)) }
            version.append(([("check", check), ("version", session.version)], 1))
            verified.append(([("check", check)], session.verified ? 1 : 0))
        }
        return [
            .gauge("weave_check_tls_cert_expiry_timestamp_seconds",
                   "The earliest expiry among the certificates an https check's server sent, in seconds since the Unix epoch.",
                   unit: "seconds", expiry),
            .gauge("weave_check_tls_version_info", "The TLS version an https check's session used; the value is always 1.", version),
            .gauge("weave_check_tls_verified", "Whether an https check's certificate chain verified against its CAs and name (1) or not (0).",
                   verified),
        ]
    }
}
