/// Something that contributes metric families at scrape time: a container's statistics, a health
/// report, the process, build information, an application. A `/metrics` endpoint is the union of
/// the families of its collectors, listed in one place by whoever composes the server; each family
/// has exactly one collector as its home.
public protocol MetricCollector: Sendable {
    /// What the collector is called where its own figures are shown (weave-healthd's
    /// `weave_scrape_collector_*{collector}`): short, in snake case. By default the type's name.
    var name: String { get }
    func collect() async -> [MetricFamily]
    /// The families of a scrape in `format`: `collect()`, unless the collector asks other processes,
    /// which it then asks in a format that keeps what `format` can show (native histograms).
    func collect(for format: Exposition.Format) async -> [MetricFamily]
    /// Whether collecting waits on other processes (an aggregation of applications): a scrape then
    /// starts it first and collects the others meanwhile. False by default.
    var waitsOnOthers: Bool { get }
    /// The families, and why collecting failed when it did (a file it reads is gone): what it could
    /// make is served all the same, and the failure shown (node_exporter's `Update() error`,
    /// weave-healthd's `weave_scrape_collector_success` 0). `collect(for:)`, which cannot fail, by default.
    func collection(for format: Exposition.Format) async -> CollectedFamilies
}

extension MetricCollector {
    public var name: String { String(describing: Self.self) }
    public var waitsOnOthers: Bool { false }
    public func collect(for format: Exposition.Format) async -> [MetricFamily] { await collect() }
    public func collection(for format: Exposition.Format) async -> CollectedFamilies { CollectedFamilies(await collect(for: format)) }
}

/// What one collection made, and why it failed, when it did.
public struct CollectedFamilies: Sendable {
    public var families: [MetricFamily]
    public var failure: String?

    public init(_ families: [MetricFamily], failure: String? = nil) {
        self.families = families
        self.failure = failure
    }
}

/// Who serves the metrics and health endpoints: the service's name (`serviceId` in `/health`, the
/// program in `weave_build_info`'s help), what it is, its version, and which running copy of it this
/// is. Libraries take it as a value; only a program names itself.
public struct ServiceIdentity: Sendable, Equatable {
    public var serviceID: String
    public var description: String
    public var version: String
    /// Which copy of the service answers, when several run (a host and port, a pod name): `/health`'s
    /// `instance` and `weave_build_info`'s `service_instance_id` label.
    public var instance: String?

    public init(serviceID: String, description: String, version: String, instance: String? = nil) {
        self.serviceID = serviceID
        self.description = description
        self.version = version
        self.instance = instance
    }
}
