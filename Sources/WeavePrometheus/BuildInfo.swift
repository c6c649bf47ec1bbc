/// `weave_build_info{version,swift[,service_instance_id]} 1`: which build of the service answers. The
/// identity's instance is `service_instance_id` (OpenTelemetry's name for it), since Prometheus gives
/// every target an `instance` label that would rename ours to `exported_instance`.
public struct BuildInfo: MetricCollector {
    public var name: String { "build_info" }
    public let identity: ServiceIdentity

    public init(identity: ServiceIdentity) {
        self.identity = identity
    }

    public func collect() async -> [MetricFamily] {
        // The help names no program: an aggregating server (weave-healthd) shows the applications' series in one family.
        [.gauge("weave_build_info", "Which build answers: the program's version and Swift release; the value is always 1.",
                [([("version", identity.version), ("swift", Self.swiftVersion)] + (identity.instance.map { [("service_instance_id", $0)] } ?? []), 1)])]
    }

    static var swiftVersion: String {
        #if compiler(>=6.3)
        return "6.3"
        #elseif compiler(>=6.2)
        return "6.2"
        #else
        return "6.0"
        #endif
    }
}
