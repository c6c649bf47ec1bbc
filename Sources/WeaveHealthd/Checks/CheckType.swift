import NIOCore
import WeaveDI
import WeaveHealth
import WeavePrometheus

/// The options of one type of check, as `type:` names it in the configuration: its keys, how they
/// are read (with positioned errors), and the check it makes. Each type lives in one file under
/// `Checks/`, beside the check itself; `CheckTypes.all` lists them, and the configuration loader
/// takes the allowed keys and the known names from that list.
protocol CheckOptions: Sendable {
    /// The `type:` value.
    static var typeName: String { get }
    /// The keys of this type, besides the ones every check has (`CheckTypes.commonKeys`).
    static var keys: Set<String> { get }
    /// Reads this type's keys of one check.
    init(_ fields: ConfigurationFields) throws(ConfigurationError)
    /// The check, made in the runtime that runs it.
    func makeCheck(_ context: CheckContext) -> any HealthCheckable
}

/// A check type with metric families of its own, made from what its checks observed: the type's
/// file says them, and `CheckTypes.all` lists it once, as for any type. Their names start with
/// `familyPrefix`, which only the daemon may say (`FamilyAdmission.reservedPrefixes` takes it from
/// here; a test renders them).
protocol CheckMetrics: CheckOptions {
    /// What every name of its families starts with.
    static var familyPrefix: String { get }
    /// The families of the current runtime's checks of this type.
    static func families(_ observations: Observations) -> [MetricFamily]
}

/// What a check gets from the runtime that runs it.
struct CheckContext {
    /// The check's name, from the configuration.
    let name: String
    /// The check's timeout (the monitor enforces it too; network checks pass it to their connects).
    let timeout: Duration
    let group: any EventLoopGroup
    /// Where its blocking library calls run (OpenSSL, sd-bus, getaddrinfo), with the check's name as their key.
    let blocking: BlockingCalls
    let observations: Observations
    /// The runtime's own container (it holds the check: keep it weakly).
    let container: Container
}

/// Every check type, by `type:` name.
enum CheckTypes {
    static let all: [any CheckOptions.Type] = [
        TCPCheck.Options.self, HTTPCheck.Options.self, DNSCheck.Options.self, ExecCheck.Options.self, DiskCheck.Options.self,
        MemoryPressureCheck.Options.self, FileCheck.Options.self, ContainerCheck.Options.self, SystemdUnitCheck.Options.self,
    ]

    /// The types with metric families of their own.
    static var withMetrics: [any CheckMetrics.Type] { all.compactMap { $0 as? any CheckMetrics.Type } }

    /// The keys every check has.
    static let commonKeys: Set<String> = ["name", "type", "interval", "timeout", "failures_before_unhealthy",
                                          "successes_before_healthy", "groups"]

    static func named(_ name: String) -> (any CheckOptions.Type)? {
        all.first { $0.typeName == name }
    }

    /// "tcp, http, …": the known names, for an error message.
    static var names: String { all.map { $0.typeName }.joined(separator: ", ") }
}
