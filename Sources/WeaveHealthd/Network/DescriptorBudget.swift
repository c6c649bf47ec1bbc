import WeaveSupport

/// How weave-healthd shares its descriptor limit (`LimitNOFILE=`, 1,024 in the shipped units):
/// a reserve for the checks (sockets, plugin pipes), the journal and the files it reads; the HTTP
/// server's connections; the applications' requests in flight; and, with what is left, the
/// connections kept open to applications between scrapes. A host with more applications than that
/// has the rest connected per request, rather than the kept connections taking the descriptors the
/// server and the checks need.
struct DescriptorBudget {
    /// Descriptors left to the checks, the journal and files.
    static let reserve = 256
    /// The fewest connections the server is given, whatever the limit.
    static let minimumServerConnections = 32

    /// The soft limit on descriptors, or nil when there is none worth counting.
    let limit: Int?

    init(limit: Int?) {
        self.limit = limit
    }

    /// The process's soft limit (`RLIMIT_NOFILE`).
    static func current() -> DescriptorBudget {
        var value = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &value) == 0, value.rlim_cur < 1 << 30 else {
            return DescriptorBudget(limit: nil)
        }
        return DescriptorBudget(limit: Int(value.rlim_cur))
    }

    /// The server's connection cap: `wanted`, or what the limit leaves after the reserve.
    func serverConnections(wanted: Int) -> Int {
        guard let limit else { return wanted }
        return min(wanted, max(limit - Self.reserve, Self.minimumServerConnections))
    }

    /// How many idle connections to applications may be kept, beside `serverConnections` and
    /// `AppFleet.maxConcurrentRequests` in flight.
    func keptAppConnections(serverConnections: Int) -> Int {
        guard let limit else { return Int.max }
        return max(limit - Self.reserve - serverConnections - AppFleet.maxConcurrentRequests, 0)
    }
}
