/// `weave_build_info{version,swift[,instance]} 1`: which build of the service answers.
public struct BuildInfo: MetricCollector {
    public let identity: ServiceIdentity

    public init(identity: ServiceIdentity) {
        self.identity = identity
    }

    public func collect() async -> [MetricFamily] {
        [.gauge("weave_build_info", "Build information of \(identity.serviceID); the value is always 1.",
                [([("version", identity.version), ("swift", Self.swiftVersion)] + (identity.instance.map { [("instance", $0)] } ?? []), 1)])]
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
