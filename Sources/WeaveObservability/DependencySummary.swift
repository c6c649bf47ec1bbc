import WeaveDI
import WeavePrometheus
import WeaveSupport

/// What `/dependencies` answers: the service's version and start, its slowest dependencies with
/// their counts and latency quantiles, and its startup tree's longest runs (times in seconds).
/// weave-healthd reads it from each application with every health round, for its status page and
/// `weave-health why`; this is the one home of the format, both ways.
///
///     {"version":"1.4.0","startedAt":1795669741.64,"dependencies":[
///       {"name":"ReportBuilder","resolutions":12,"slow":3,"errors":0,"p50":0.0251,"p99":0.0262}],
///      "startup":{"endedAt":1795669742.1,"omitted":0,"runs":[
///       {"name":"ReportBuilder","parent":"OrderService","start":0.0051,"total":0.0301,"self":0.0101}]}}
public struct DependencySummary: Sendable, Equatable {
    public struct Dependency: Sendable, Equatable {
        /// The key's description: `TypeName` or `name (TypeName)`.
        public let name: String
        public let resolutions: UInt64
        public let slow: UInt64
        public let errors: UInt64
        /// Latency quantiles of the timed resolves, in seconds (within 4.5 %); nil before any.
        public let p50: Double?
        public let p99: Double?

        public init(name: String, resolutions: UInt64, slow: UInt64, errors: UInt64, p50: Double?, p99: Double?) {
            self.name = name
            self.resolutions = resolutions
            self.slow = slow
            self.errors = errors
            self.p50 = p50
            self.p99 = p99
        }
    }

    public let version: String
    /// When the process started, in seconds since the Unix epoch.
    public let startedAt: Double?
    /// Slowest first, by p99 (untimed ones last, by resolutions).
    public let dependencies: [Dependency]
    /// The startup tree's longest runs (`StartupTree.longest`); nil from an application before 0.4.
    public let startup: StartupTree?

    /// At most this many dependencies are listed, whatever `?limit=` asks.
    public static let maxDependencies = 100
    /// Listed when `?limit=` is not given.
    public static let defaultLimit = 10
    /// At most this many startup runs are listed, whatever `?startup=` asks.
    public static let maxStartupRuns = 100
    /// Listed when `?startup=` is not given: the rows of the status page's waterfall.
    public static let defaultStartupRuns = 20

    public init(version: String, startedAt: Double?, dependencies: [Dependency], startup: StartupTree? = nil) {
        self.version = version
        self.startedAt = startedAt
        self.dependencies = dependencies
        self.startup = startup
    }

    /// The `limit` slowest dependencies of `statistics`, and the `startupRuns` longest runs of `startup`.
    public init(version: String, startedAt: Double?, statistics: ContainerStatistics, limit: Int,
                startup: StartupTree? = nil, startupRuns: Int = defaultStartupRuns) {
        let listed = statistics.services.filter { $0.scope != nil }.map { service -> Dependency in
            let latency = service.latency
            return Dependency(name: service.service, resolutions: service.resolutions, slow: service.slowResolutions,
                              errors: service.errorCount, p50: latency.quantile(0.5), p99: latency.quantile(0.99))
        }
        let slowest = listed.sorted { a, b in
            if (a.p99 ?? -1) != (b.p99 ?? -1) { return (a.p99 ?? -1) > (b.p99 ?? -1) }
            return (a.resolutions, b.name) > (b.resolutions, a.name)
        }
        self.init(version: version, startedAt: startedAt,
                  dependencies: Array(slowest.prefix(max(0, min(limit, Self.maxDependencies)))),
                  startup: startup?.longest(max(0, min(startupRuns, Self.maxStartupRuns))))
    }

    /// The JSON document.
    public var json: String {
        func number(_ value: Double?) -> String { value.map { $0.isFinite ? "\($0)" : "null" } ?? "null" }
        let listed = dependencies.map { dependency in
            "{\"name\":\(JSONText.quoted(dependency.name)),\"resolutions\":\(dependency.resolutions),\"slow\":\(dependency.slow),"
                + "\"errors\":\(dependency.errors),\"p50\":\(number(dependency.p50)),\"p99\":\(number(dependency.p99))}"
        }
        var text = "{\"version\":\(JSONText.quoted(version)),\"startedAt\":\(number(startedAt)),"
            + "\"dependencies\":[\(listed.joined(separator: ","))]"
        if let startup {
            let runs = startup.runs.map { run in
                "{\"name\":\(JSONText.quoted(run.service)),\"parent\":\(run.parent.map(JSONText.quoted) ?? "null"),"
                    + "\"start\":\(run.start.totalSeconds),\"total\":\(run.total.totalSeconds),\"self\":\(run.selfTime.totalSeconds)}"
            }
            text += ",\"startup\":{\"endedAt\":\(number(startup.endedAt)),\"omitted\":\(startup.omitted),\"runs\":[\(runs.joined(separator: ","))]}"
        }
        return text + "}\n"
    }

    /// Reads a document another process sent; nil when it is not one (or lists more than
    /// `maxDependencies`, or gives a count that is not a whole number).
    public init?(json bytes: [UInt8]) {
        guard let document = JSONValue.parse(bytes), let version = document["version"]?.string,
              case .array(let entries)? = document["dependencies"], entries.count <= Self.maxDependencies else { return nil }
        func count(_ value: JSONValue?) -> UInt64? {
            guard let number = value?.number, number >= 0, number < 0x1p64, number.rounded() == number else { return nil }
            return UInt64(number)
        }
        // A latency is a duration the histogram can hold (up to 10 s): anything else is no figure.
        func latency(_ value: JSONValue?) -> Double? { value?.number.flatMap { $0 >= 0 && $0 <= 3_600 ? $0 : nil } }
        var dependencies: [Dependency] = []
        for entry in entries {
            guard let name = entry["name"]?.string, let resolutions = count(entry["resolutions"]),
                  let slow = count(entry["slow"]), let errors = count(entry["errors"]) else { return nil }
            dependencies.append(Dependency(name: name, resolutions: resolutions, slow: slow, errors: errors,
                                           p50: latency(entry["p50"]), p99: latency(entry["p99"])))
        }
        var startup: StartupTree?
        if let tree = document["startup"] {
            guard case .array(let items)? = tree["runs"], items.count <= Self.maxStartupRuns,
                  let omitted = count(tree["omitted"]) else { return nil }
            let endedAt = tree["endedAt"]?.epochSeconds
            guard endedAt != nil || tree["endedAt"] == .null else { return nil }
            var runs: [StartupTree.Run] = []
            for item in items {
                guard let name = item["name"]?.string, let start = latency(item["start"]), let total = latency(item["total"]),
                      let own = latency(item["self"]), own <= total else { return nil }
                let parent: String?
                switch item["parent"] {
                case .string(let name)?: parent = name
                case .null?: parent = nil
                default: return nil
                }
                runs.append(StartupTree.Run(service: name, parent: parent, start: .seconds(start), total: .seconds(total),
                                            selfTime: .seconds(own)))
            }
            startup = StartupTree(runs: runs, endedAt: endedAt, omitted: Int(min(omitted, UInt64(Int.max))))
        }
        // A start time is a date, or absent (an application before 0.4 sends none).
        let startedAt = document["startedAt"]?.epochSeconds
        guard startedAt != nil || document["startedAt"].map({ $0 == .null }) ?? true else { return nil }
        self.init(version: version, startedAt: startedAt, dependencies: dependencies, startup: startup)
    }
}
