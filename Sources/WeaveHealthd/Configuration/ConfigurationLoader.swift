import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveObservability
import WeavePrometheus
import WeaveReaders
import WeaveSupport

/// Reads a YAML configuration, rejecting anything unknown or malformed with its position.
struct ConfigurationLoader {
    let file: String
    let text: String

    /// Loads `path`; a missing or unreadable file is an error at 1:1.
    static func load(path: String) throws(ConfigurationError) -> DaemonConfiguration {
        let text: String
        switch readTextFile(path, limit: maxFileBytes) {
        case .success(let contents): text = contents
        case .failure(let failure):
            throw ConfigurationError(file: path, line: 1, column: 1, message: "cannot read the file: \(failure)")
        }
        return try ConfigurationLoader(file: path, text: text).parse(consultingTheSystem: true)
    }

    /// Configurations are small; anything larger is a mistake (a wrong path, a log file).
    static let maxFileBytes = 4 << 20

    /// Parses the text. With `consultingTheSystem`, what the configuration names outside itself is
    /// checked too, each problem an error at its key: the bearer token file is read (missing or empty
    /// is an error), and listen hosts must resolve.
    func parse(consultingTheSystem: Bool = false) throws(ConfigurationError) -> DaemonConfiguration {
        let document: YAMLNode?
        do throws(YAMLSyntaxError) {
            document = try YAMLReader.parse(text)
        } catch {
            throw ConfigurationError(file: file, line: error.line, column: error.column, message: "YAML: \(error.message)")
        }
        guard let root = document else { throw error(nil, "the configuration is empty") }
        let top = try mapping(root, allowed: ["listen", "details", "bearer_token_file", "slow_resolution_threshold",
                                              "memory_pressure", "status_codes", "log_rate_limit", "checks", "apps",
                                              "metrics", "textfile"])
        var configuration = DaemonConfiguration()
        configuration.positions = top.mapValues { ($0.line, $0.column) }
        if let listen = top["listen"] { configuration.listeners = try listeners(listen, resolving: consultingTheSystem) }
        if let details = top["details"] { configuration.detailsPolicy = try detailsPolicy(details) }
        if let file = top["bearer_token_file"] {
            configuration.bearerTokenFile = try string(file)
            if consultingTheSystem { configuration.bearerToken = try bearerToken(file) }
        }
        if configuration.detailsPolicy == .whenAuthorized && configuration.bearerTokenFile == nil {
            throw error(top["details"], "details: when-authorized needs bearer_token_file")
        }
        if let threshold = top["slow_resolution_threshold"] {
            configuration.slowResolutionThreshold = try duration(threshold, atMost: .seconds(3_600), "1h")
        }
        if let pressure = top["memory_pressure"], let trigger = try pressureTrigger(pressure) {
            configuration.memoryPressureTrigger = trigger
        }
        if let limit = top["log_rate_limit"] { configuration.logRateLimit = try logRateLimit(limit) }
        if let codes = top["status_codes"] { configuration.statusCodes = try statusCodes(codes) }
        if let checks = top["checks"] { configuration.checks = try self.checks(checks) }
        if let apps = top["apps"] { configuration.apps = try self.apps(apps) }
        if let textfile = top["textfile"] { configuration.textfile = try self.textfile(textfile) }
        if let metrics = top["metrics"], let buckets = try resolveBuckets(metrics) { configuration.resolveBuckets = buckets }
        return configuration
    }

    // MARK: Sections

    private func detailsPolicy(_ node: YAMLNode) throws(ConfigurationError) -> DetailsPolicy {
        let value = try string(node)
        guard let policy = DetailsPolicy(rawValue: value) else {
            throw error(node, "details must be one of \(DetailsPolicy.allCases.map(\.rawValue).joined(separator: ", ")), not '\(value)'")
        }
        return policy
    }

    /// The token in `bearer_token_file`'s file (missing or empty is an error at the key).
    private func bearerToken(_ node: YAMLNode) throws(ConfigurationError) -> String {
        let path = try string(node)
        switch readTextFile(path, limit: 4_096) {
        case .success(let text):
            // `echo secret > token` leaves a newline; no token has whitespace at its ends.
            let token = text.trimmingWhitespace()
            guard !token.isEmpty else { throw error(node, "bearer_token_file \(path) is empty") }
            return token
        case .failure(let failure):
            throw error(node, "cannot read bearer_token_file \(path): \(failure)")
        }
    }

    /// `memory_pressure: {trigger: "some 150000 1000000"}`, within the kernel's bounds; nil without a trigger.
    private func pressureTrigger(_ node: YAMLNode) throws(ConfigurationError) -> String? {
        let fields = try mapping(node, allowed: ["trigger"])
        guard let trigger = fields["trigger"] else { return nil }
        let value = try string(trigger)
        let parts = value.split(separator: " ")
        guard parts.count == 3, parts[0] == "some" || parts[0] == "full", let stall = UInt64(parts[1]),
              let window = UInt64(parts[2]) else {
            throw error(trigger, "trigger must look like 'some 150000 1000000' (type, stall µs, window µs)")
        }
        // The kernel's own bounds for PSI triggers (Documentation/accounting/psi.rst).
        guard (500_000...10_000_000).contains(window), (1...window).contains(stall) else {
            throw error(trigger, "the trigger's window must be 500000 to 10000000 µs, and its stall 1 µs up to the window")
        }
        return value
    }

    private func logRateLimit(_ node: YAMLNode) throws(ConfigurationError) -> LogRateLimit {
        let fields = try mapping(node, allowed: ["burst", "interval"])
        var value = LogRateLimit.default
        if let burst = fields["burst"] {
            value.burst = try integer(burst, in: 1...1_000_000)
        }
        if let interval = fields["interval"] {
            value.window = try duration(interval, atMost: .seconds(86_400), "24h")
        }
        return value
    }

    private func statusCodes(_ node: YAMLNode) throws(ConfigurationError) -> (pass: Int, warn: Int, fail: Int) {
        let fields = try mapping(node, allowed: ["pass", "warn", "fail"])
        func code(_ key: String, _ fallback: Int) throws(ConfigurationError) -> Int {
            guard let node = fields[key] else { return fallback }
            let value = try integer(node)
            // 1xx, 204 and 304 responses carry no body, and a client waits for what follows a 1xx.
            guard (200...599).contains(value), value != 204, value != 304 else {
                throw error(node, "\(key) must be an HTTP status from 200 to 599 that carries a body (not 204 or 304)")
            }
            return value
        }
        let defaults = HealthPolicy().statusCodes
        return (try code("pass", defaults.pass), try code("warn", defaults.warn), try code("fail", defaults.fail))
    }

    /// The checks, each name once.
    private func checks(_ node: YAMLNode) throws(ConfigurationError) -> [CheckConfiguration] {
        guard case .sequence(let items) = node.value else { throw error(node, "checks must be a list") }
        var names: Set<String> = []
        var checks: [CheckConfiguration] = []
        for item in items {
            let check = try self.check(item)
            guard names.insert(check.name).inserted else { throw error(item, "a check named '\(check.name)' already exists") }
            checks.append(check)
        }
        return checks
    }

    /// `metrics: {resolve_buckets: …}`; nil without it.
    private func resolveBuckets(_ node: YAMLNode) throws(ConfigurationError) -> ResolveBuckets? {
        let fields = try mapping(node, allowed: ["resolve_buckets"])
        guard let node = fields["resolve_buckets"] else { return nil }
        let text = try string(node)
        guard let buckets = ResolveBuckets(text) else {
            throw error(node, "resolve_buckets must be all, none, or a whole number N (the N slowest dependencies keep "
                        + "their buckets), not '\(text)'")
        }
        return buckets
    }

    private func listeners(_ node: YAMLNode, resolving: Bool) throws(ConfigurationError) -> [Listener] {
        guard case .sequence(let items) = node.value, !items.isEmpty else { throw error(node, "listen must be a non-empty list") }
        var result: [Listener] = []
        for item in items {
            let fields = try mapping(item, allowed: ["address", "unix", "mode"])
            if let address = fields["address"] {
                let text = try string(address)
                guard let listener = Self.parseAddress(text) else {
                    throw error(address, "address must be host:port (IPv6 as [::1]:port), not '\(text)'")
                }
                if resolving, case .tcp(let host, _) = listener, let problem = Self.unresolvable(host) {
                    throw error(address, "cannot listen on '\(host)': \(problem)")
                }
                result.append(listener)
            } else if let unix = fields["unix"] {
                let path = try string(unix)
                guard path.hasPrefix("/") else { throw error(unix, "unix must be an absolute socket path") }
                var mode: UInt32 = 0o660
                if let modeNode = fields["mode"] {
                    guard let value = UInt32(try string(modeNode), radix: 8), value <= 0o777 else {
                        throw error(modeNode, "mode must be octal, such as \"0660\"")
                    }
                    mode = value
                }
                result.append(.unix(path: path, mode: mode))
            } else {
                throw error(item, "a listener needs address: host:port or unix: /path")
            }
        }
        return result
    }

    /// Why `host` cannot be bound to (it does not resolve), or nil: better a positioned error now
    /// than a failed bind after startup.
    static func unresolvable(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        if let list { freeaddrinfo(list) }
        return status == 0 ? nil : String(cString: gai_strerror(status))
    }

    static func parseAddress(_ text: String) -> Listener? {
        HostPort.parse(text).map { .tcp(host: $0.host, port: $0.port) }
    }

    private func check(_ node: YAMLNode) throws(ConfigurationError) -> CheckConfiguration {
        let all = try mapping(node, allowed: nil)
        guard let nameNode = all["name"] else { throw error(node, "a check needs a name") }
        let name = try string(nameNode)
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw error(nameNode, "a check name uses letters, digits, '-', '_' and '.' only")
        }
        // As an application's name: a label value, a journal field, a line of /health in every answer.
        guard name.utf8.count <= AppSocket.maxNameBytes else {
            throw error(nameNode, "a check name is at most \(AppSocket.maxNameBytes) bytes (this one is \(name.utf8.count))")
        }
        guard let typeNode = all["type"] else { throw error(node, "check '\(name)' needs a type") }
        let typeName = try string(typeNode)
        guard let type = CheckTypes.named(typeName) else {
            throw error(typeNode, "unknown check type '\(typeName)'; use \(CheckTypes.names)")
        }
        let fields = try mapping(node, allowed: CheckTypes.commonKeys.union(type.keys))
        var settings = HealthCheckSettings(interval: Defaults.checkInterval, timeout: Defaults.checkTimeout)
        if let value = fields["interval"] {
            settings.interval = try duration(value, atLeast: (.milliseconds(100), "100ms"), atMost: .seconds(86_400), "24h")
        }
        if let value = fields["timeout"] { settings.timeout = try duration(value, atLeast: (.milliseconds(10), "10ms"), atMost: .seconds(3_600), "1h") }
        if let value = fields["failures_before_unhealthy"] { settings.failuresBeforeUnhealthy = try integer(value, in: 1...1_000) }
        if let value = fields["successes_before_healthy"] { settings.successesBeforeHealthy = try integer(value, in: 1...1_000) }
        if let value = fields["groups"] {
            guard case .sequence(let groups) = value.value else { throw error(value, "groups must be a list, such as [ready]") }
            var names: Set<String> = []
            for group in groups { names.insert(try string(group)) }
            settings.groups = names
        }
        let options = try type.init(ConfigurationFields(loader: self, node: node, values: fields, typeName: typeName))
        return CheckConfiguration(name: name, options: options, settings: settings)
    }

    // MARK: Values

    func mapping(_ node: YAMLNode, allowed: Set<String>?) throws(ConfigurationError) -> [String: YAMLNode] {
        guard case .mapping(let mapping) = node.value else { throw error(node, "expected a mapping of key: value") }
        var result: [String: YAMLNode] = [:]
        for (keyNode, value) in mapping {
            let key = try string(keyNode)
            if let allowed, !allowed.contains(key) {
                let near = allowed.sorted().filter { Self.similar($0, key) }
                throw error(keyNode, "unknown key '\(key)'" + (near.isEmpty ? "; allowed: \(allowed.sorted().joined(separator: ", "))"
                                                                             : "; did you mean '\(near[0])'?"))
            }
            guard result[key] == nil else { throw error(keyNode, "duplicate key '\(key)'") }
            result[key] = value
        }
        return result
    }

    private static func similar(_ a: String, _ b: String) -> Bool {
        a.hasPrefix(b) || b.hasPrefix(a) || (abs(a.count - b.count) <= 2 && Set(a).symmetricDifference(Set(b)).count <= 2)
    }

    /// A scalar; a NUL byte is rejected, since C calls (open, getaddrinfo) would stop reading at it.
    func string(_ node: YAMLNode) throws(ConfigurationError) -> String {
        guard case .scalar(let scalar) = node.value else { throw error(node, "expected a value, not a list or mapping") }
        guard !scalar.utf8.contains(0) else { throw error(node, "a value must not contain a NUL byte") }
        return scalar
    }

    func integer(_ node: YAMLNode) throws(ConfigurationError) -> Int {
        guard let value = Int(try string(node)) else { throw error(node, "expected a whole number") }
        return value
    }

    func integer(_ node: YAMLNode, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        let value = try integer(node)
        guard range.contains(value) else { throw error(node, "expected a whole number from \(range.lowerBound) to \(range.upperBound)") }
        return value
    }

    func number(_ node: YAMLNode, atMost limit: Double) throws(ConfigurationError) -> Double {
        guard let value = Double(try string(node)), value.isFinite, value >= 0, value <= limit else {
            throw error(node, "expected a number from 0 to \(limit < 1e15 ? String(Int(limit)) : String(limit))")
        }
        return value
    }

    func boolean(_ node: YAMLNode) throws(ConfigurationError) -> Bool {
        switch try string(node) {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(node, "expected true or false")
        }
    }

    func statusRange(_ node: YAMLNode) throws(ConfigurationError) -> ClosedRange<Int> {
        let text = try string(node)
        let parts = text.split(separator: "-").map { Int($0.trimmingWhitespace()) }
        if parts.count == 1, let code = parts[0], (100...599).contains(code) { return code...code }
        if parts.count == 2, let low = parts[0], let high = parts[1], (100...599).contains(low), (low...599).contains(high) {
            return low...high
        }
        throw error(node, "expect_status must be a status (200) or a range (200-299)")
    }

    /// `250us`, `10ms`, `5s`, `2m`, `1h`, or a plain number of seconds; positive and at most `limit`
    /// (spelled `limitText` in the error).
    /// A positive duration within `limit` and, when given, at least `floor` (what a loop that runs
    /// that often may cost: a check every microsecond would hold a core).
    func duration(_ node: YAMLNode, atLeast floor: (Duration, String)? = nil, atMost limit: Duration,
                  _ limitText: String) throws(ConfigurationError) -> Duration {
        let text = try string(node)
        guard let seconds = Self.parseSeconds(text), seconds > 0 else {
            throw error(node, "expected a positive duration such as 500ms, 10s or 2m, not '\(text)'")
        }
        guard seconds <= limit.totalSeconds else { throw error(node, "'\(text)' is too long: at most \(limitText)") }
        if let (least, leastText) = floor, seconds < least.totalSeconds {
            throw error(node, "'\(text)' is too short: at least \(leastText)")
        }
        return .nanoseconds(Int64(seconds * 1e9))
    }

    /// Parses a duration; nil when it is malformed, negative, or beyond what `Duration` holds in
    /// nanoseconds (about 292 years), so no input can trap in the conversion.
    static func parseDuration(_ text: String) -> Duration? {
        guard let seconds = parseSeconds(text), seconds * 1e9 < 0x1p63 else { return nil }
        return .nanoseconds(Int64(seconds * 1e9))
    }

    /// A duration's text as seconds (any size), or nil when it is malformed or negative.
    private static func parseSeconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        if let unit = units.first(where: { text.hasSuffix($0.0) }) {
            number = number.dropLast(unit.0.count)
            scale = unit.1
        }
        guard let value = Double(number), value.isFinite, value >= 0, (value * scale).isFinite else { return nil }
        return value * scale
    }

    // MARK: Errors

    func error(_ node: YAMLNode?, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: node?.line ?? 1, column: node?.column ?? 1, message: message)
    }
}

