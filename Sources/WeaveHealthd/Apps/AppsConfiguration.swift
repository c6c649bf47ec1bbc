import WeaveHealthServer
import WeaveReaders
import WeaveSystemd

/// `apps:`: the applications whose endpoints (`WeaveAppEndpoint`) the daemon aggregates: sockets
/// found in a watched directory, plus targets named in the file.
struct AppsConfiguration: Sendable {
    /// Where applications put their sockets (`<name>.sock`), or nil for no discovery.
    var directory: String?
    /// Applications named in the file.
    var targets: [AppTarget]
    /// How long one application may take to answer one request.
    var timeout: Duration
    /// How long a whole `/metrics` scrape may spend on applications; those still fetching then are down.
    var budget: Duration
    /// How often each application's `/health` is read, when it is not watched.
    var healthInterval: Duration
    /// Whether applications that can be watched are (`AppWatches`): told of their news by a request
    /// they hold, rather than polled every `healthInterval`.
    var watch = true
    /// The largest exposition or health document read from one application (4 MiB: about 25 times
    /// what an application of 100 dependencies and 100 checks serves by default; at most
    /// `AppFleet.maxConcurrentRequests` of them are held at once).
    var maxResponseBytes: Int
    /// The most one `/metrics` scrape keeps of all the applications' expositions together, relabelled
    /// (16 MiB: about 100 applications of 100 dependencies and 100 checks with the default buckets). A
    /// scrape holds them and the merged answer at once, so this bounds its memory: within the
    /// shipped unit's `MemoryMax=256M` with 16 answers in flight.
    var maxScrapeBytes: Int
    /// Labels one series of an application may have (Prometheus's `label_limit`), and samples one
    /// answer may have (`sample_limit`; nil for no bound): past either, the application is down for
    /// that scrape, with the limit's name.
    var labelLimit: Int
    var sampleLimit: Int?

    init(directory: String? = AppSocket.defaultDirectory, targets: [AppTarget] = [], timeout: Duration = .seconds(2),
         budget: Duration = .seconds(5), healthInterval: Duration = .seconds(1), maxResponseBytes: Int = 4 << 20,
         maxScrapeBytes: Int = 16 << 20, labelLimit: Int = 128, sampleLimit: Int? = 200_000) {
        self.directory = directory
        self.targets = targets
        self.timeout = timeout
        self.budget = budget
        self.healthInterval = healthInterval
        self.maxResponseBytes = maxResponseBytes
        self.maxScrapeBytes = maxScrapeBytes
        self.labelLimit = labelLimit
        self.sampleLimit = sampleLimit
    }
}

/// One application endpoint.
struct AppTarget: Sendable, Equatable {
    /// The `app` label, and the prefix of its components' names (`<name>/<check>`).
    var name: String
    var address: HTTPFetch.Target
    /// The `Host` header and the path prefix (`/` for a socket; a URL's path otherwise).
    var host: String
    var pathPrefix: String
    /// The application's systemd unit, whose state the reason of a down application includes.
    var unit: String? = nil
}

extension ConfigurationLoader {
    func apps(_ node: YAMLNode) throws(ConfigurationError) -> AppsConfiguration {
        let fields = try mapping(node, allowed: ["directory", "discover", "targets", "timeout", "budget", "health_interval", "watch",
                                                 "max_response_bytes", "max_scrape_bytes", "label_limit", "sample_limit"])
        var apps = AppsConfiguration()
        if let directory = fields["directory"] {
            let path = try string(directory)
            guard path.hasPrefix("/") else { throw error(directory, "directory must be an absolute path") }
            apps.directory = path
        }
        if let discover = fields["discover"], try !boolean(discover) { apps.directory = nil }
        if let value = fields["timeout"] { apps.timeout = try duration(value, atLeast: (.milliseconds(10), "10ms"), atMost: .seconds(60), "60s") }
        if let value = fields["budget"] { apps.budget = try duration(value, atLeast: (.milliseconds(100), "100ms"), atMost: .seconds(120), "120s") }
        if let value = fields["health_interval"] {
            apps.healthInterval = try duration(value, atLeast: (.milliseconds(100), "100ms"), atMost: .seconds(3_600), "1h")
        }
        if let value = fields["watch"] { apps.watch = try boolean(value) }
        if let value = fields["max_response_bytes"] { apps.maxResponseBytes = try integer(value, in: 4_096...(256 << 20)) }
        if let value = fields["max_scrape_bytes"] { apps.maxScrapeBytes = try integer(value, in: 4_096...(1 << 30)) }
        if let value = fields["label_limit"] { apps.labelLimit = try integer(value, in: 1...10_000) }
        if let value = fields["sample_limit"] {
            let limit = try integer(value, in: 0...100_000_000)
            apps.sampleLimit = limit == 0 ? nil : limit
        }
        if apps.timeout > apps.budget {
            throw error(fields["timeout"] ?? fields["budget"], "apps: timeout (\(apps.timeout)) must not exceed budget (\(apps.budget))")
        }
        if apps.maxResponseBytes > apps.maxScrapeBytes {
            throw error(fields["max_response_bytes"] ?? fields["max_scrape_bytes"],
                        "apps: max_response_bytes (\(apps.maxResponseBytes)) must not exceed max_scrape_bytes (\(apps.maxScrapeBytes))")
        }
        if let targets = fields["targets"] {
            guard case .sequence(let items) = targets.value else { throw error(targets, "targets must be a list") }
            var names: Set<String> = []
            for item in items {
                let target = try appTarget(item)
                guard names.insert(target.name).inserted else { throw error(item, "an application named '\(target.name)' already exists") }
                apps.targets.append(target)
            }
        }
        return apps
    }

    private func appTarget(_ node: YAMLNode) throws(ConfigurationError) -> AppTarget {
        let fields = try mapping(node, allowed: ["name", "socket", "url", "unit"])
        guard let nameNode = fields["name"] else { throw error(node, "an application needs a name") }
        let name = try string(nameNode)
        guard AppSocket.isValidName(name) else {
            throw error(nameNode, "an application name uses letters, digits, '-', '_' and '.' only (at most 128, not starting with '.')")
        }
        var unit: String?
        if let node = fields["unit"] {
            unit = try string(node)
            guard SystemdUnit.isValidName(unit!) else { throw error(node, "unit must be a unit name with its type, such as billing.service") }
        }
        switch (fields["socket"], fields["url"]) {
        case (let socket?, nil):
            let path = try string(socket)
            guard path.hasPrefix("/") else { throw error(socket, "socket must be an absolute path") }
            return AppTarget(name: name, address: .unix(path: path), host: "localhost", pathPrefix: "", unit: unit)
        case (nil, let url?):
            let text = try string(url)
            guard let parsed = HTTPURL(text), !parsed.secure else { throw error(url, "url must be http://host[:port][/prefix], not '\(text)'") }
            let prefix = parsed.path.hasSuffix("/") ? String(parsed.path.dropLast()) : parsed.path
            return AppTarget(name: name, address: .tcp(host: parsed.host, port: parsed.port), host: parsed.hostHeader, pathPrefix: prefix,
                             unit: unit)
        default:
            throw error(node, "application '\(name)' needs exactly one of socket: /path or url: http://host:port")
        }
    }
}
