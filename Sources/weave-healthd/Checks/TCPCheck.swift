import NIOCore
import NIOPosix
import WeaveDI

/// Healthy when a TCP connection to host:port opens (within the check's timeout).
struct TCPCheck: HealthCheckable {
    let name: String
    let host: String
    let port: Int
    let timeout: Duration
    let group: any EventLoopGroup
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let channel = try await ClientBootstrap(group: group)
                .connectTimeout(.nanoseconds(timeout.totalNanoseconds))
                .connect(checking: host, port: port).get()
            try? await channel.close()
            let elapsed = clock.now - start
            observations.record(name, value: elapsed.totalSeconds, unit: "s")
            return .healthy
        } catch {
            return .unhealthy(error: CheckFailure(NetworkFailure.reason(error, host: host, port: port)))
        }
    }
}

/// A check's failure, as text for the log and (when allowed) the health body.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
