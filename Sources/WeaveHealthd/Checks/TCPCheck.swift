import NIOCore
import NIOPosix
import WeaveHealth
import WeaveSupport

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

extension TCPCheck {
    /// `type: tcp`: `host`, `port`.
    struct Options: CheckOptions {
        static let typeName = "tcp"
        static let keys: Set<String> = ["host", "port"]
        let host: String
        let port: Int

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            guard fields["host"] != nil, fields["port"] != nil else { throw fields.loader.error(fields.node, "a tcp check needs host and port") }
            host = try fields.string("host")!
            port = try fields.integer("port", in: 1...65535)!
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            TCPCheck(name: context.name, host: host, port: port, timeout: context.timeout, group: context.group,
                     observations: context.observations)
        }
    }
}

/// A check's failure, as text for the log and (when allowed) the health body.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
