#if canImport(Glibc)
import Glibc
#endif
import WeaveDI
import WeaveHealthServer

/// Reads a YAML configuration, rejecting anything unknown or malformed with its position.
struct ConfigurationLoader {
    let file: String
    let text: String

    /// Loads `path`; a missing or unreadable file is an error at 1:1.
    static func load(path: String) throws(ConfigurationError) -> DaemonConfiguration {
        guard let text = readFile(path) else {
            throw ConfigurationError(file: path, line: 1, column: 1, message: "cannot read the file: \(String(cString: strerror(errno)))")
        }
        return try ConfigurationLoader(file: path, text: text).parse()
    }

    func parse() throws(ConfigurationError) -> DaemonConfiguration {
        let document: YAMLNode?
        do throws(YAMLSyntaxError) {
            document = try YAMLReader.parse(text)
        } catch {
            throw ConfigurationError(file: file, line: error.line, column: error.column, message: "YAML: \(error.message)")
        }
        guard let root = document else { throw error(nil, "the configuration is empty") }
        let top = try mapping(root, allowed: ["listen", "details", "bearer_token_file", "slow_resolution_threshold",
                                              "memory_pressure", "status_codes", "log_rate_limit", "checks"])
        var configuration = DaemonConfiguration(
            listeners: [.tcp(host: "127.0.0.1", port: Defaults.port)], detailsPolicy: nil, bearerTokenFile: nil,
            slowResolutionThreshold: .milliseconds(10), memoryPressureTrigger: "some 150000 1000000",
            statusCodes: (200, 200, 503), logRateLimit: .default, checks: [])
        if let listen = top["listen"] { configuration.listeners = try listeners(listen) }
        if let details = top["details"] {
            let value = try string(details)
            guard let policy = DetailsPolicy(rawValue: value) else {
                throw error(details, "details must be one of \(DetailsPolicy.allCases.map(\.rawValue).joined(separator: ", ")), not '\(value)'")
            }
            configuration.detailsPolicy = policy
        }
        if let file = top["bearer_token_file"] { configuration.bearerTokenFile = try string(file) }
        if configuration.detailsPolicy == .whenAuthorized && configuration.bearerTokenFile == nil {
            throw error(top["details"], "details: when-authorized needs bearer_token_file")
        }
        if let threshold = top["slow_resolution_threshold"] { configuration.slowResolutionThreshold = try duration(threshold) }
        if let pressure = top["memory_pressure"] {
            let fields = try mapping(pressure, allowed: ["trigger"])
            if let trigger = fields["trigger"] {
                let value = try string(trigger)
                let parts = value.split(separator: " ")
                guard parts.count == 3, parts[0] == "some" || parts[0] == "full", UInt64(parts[1]) != nil, UInt64(parts[2]) != nil else {
                    throw error(trigger, "trigger must look like 'some 150000 1000000' (type, stall µs, window µs)")
                }
                configuration.memoryPressureTrigger = value
            }
        }
        if let limit = top["log_rate_limit"] {
            let fields = try mapping(limit, allowed: ["burst", "interval"])
            var value = LogRateLimit.default
            if let burst = fields["burst"] {
                value.burst = try integer(burst)
                guard value.burst >= 1 else { throw error(burst, "burst must be at least 1") }
            }
            if let interval = fields["interval"] {
                value.window = try duration(interval)
                guard value.window > .zero else { throw error(interval, "interval must be positive") }
            }
            configuration.logRateLimit = value
        }
        if let codes = top["status_codes"] {
            let fields = try mapping(codes, allowed: ["pass", "warn", "fail"])
            func code(_ key: String, _ fallback: Int) throws(ConfigurationError) -> Int {
                guard let node = fields[key] else { return fallback }
                let value = try integer(node)
                guard (100...599).contains(value) else { throw error(node, "\(key) must be an HTTP status, 100 to 599") }
                return value
            }
            configuration.statusCodes = (try code("pass", 200), try code("warn", 200), try code("fail", 503))
        }
        if let checks = top["checks"] {
            guard case .sequence(let items) = checks.value else { throw error(checks, "checks must be a list") }
            var names: Set<String> = []
            for item in items {
                let check = try self.check(item, ownPort: configuration.ownPort)
                guard names.insert(check.name).inserted else { throw error(item, "a check named '\(check.name)' already exists") }
                configuration.checks.append(check)
            }
        }
        return configuration
    }

    // MARK: Sections

    private func listeners(_ node: YAMLNode) throws(ConfigurationError) -> [Listener] {
        guard case .sequence(let items) = node.value, !items.isEmpty else { throw error(node, "listen must be a non-empty list") }
        var result: [Listener] = []
        for item in items {
            let fields = try mapping(item, allowed: ["address", "unix", "mode"])
            if let address = fields["address"] {
                let text = try string(address)
                guard let listener = Self.parseAddress(text) else {
                    throw error(address, "address must be host:port (IPv6 as [::1]:port), not '\(text)'")
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

    static func parseAddress(_ text: String) -> Listener? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":"),
                  let port = Int(text[text.index(close, offsetBy: 2)...]), (1...65535).contains(port) else { return nil }
            return .tcp(host: String(text[text.index(after: text.startIndex)..<close]), port: port)
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port), colon != text.startIndex else { return nil }
        return .tcp(host: String(text[..<colon]), port: port)
    }

    private static let commonKeys: Set<String> = ["name", "type", "interval", "timeout", "failures_before_unhealthy",
                                                  "successes_before_healthy", "groups"]

    private func check(_ node: YAMLNode, ownPort: Int?) throws(ConfigurationError) -> CheckConfiguration {
        let all = try mapping(node, allowed: nil)
        guard let nameNode = all["name"] else { throw error(node, "a check needs a name") }
        let name = try string(nameNode)
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw error(nameNode, "a check name uses letters, digits, '-', '_' and '.' only")
        }
        guard let typeNode = all["type"] else { throw error(node, "check '\(name)' needs a type") }
        let type = try string(typeNode)
        let specific: Set<String>
        switch type {
        case "tcp": specific = ["host", "port"]
        case "http": specific = ["url", "expect_status", "body_contains"]
        case "exec": specific = ["command", "shell", "environment"]
        case "disk": specific = ["path", "warn_free_percent", "fail_free_percent", "warn_free_bytes", "fail_free_bytes"]
        case "memory_pressure": specific = ["path", "warn_avg10", "fail_avg10"]
        case "file": specific = ["path", "max_age"]
        case "container": specific = []
        default:
            throw error(typeNode, "unknown check type '\(type)'; use tcp, http, exec, disk, memory_pressure, file or container")
        }
        let fields = try mapping(node, allowed: Self.commonKeys.union(specific))
        var settings = HealthCheckSettings(interval: .seconds(15), timeout: .seconds(5))
        if let value = fields["interval"] { settings.interval = try duration(value) }
        if let value = fields["timeout"] { settings.timeout = try duration(value) }
        if let value = fields["failures_before_unhealthy"] { settings.failuresBeforeUnhealthy = try positive(value) }
        if let value = fields["successes_before_healthy"] { settings.successesBeforeHealthy = try positive(value) }
        if let value = fields["groups"] {
            guard case .sequence(let groups) = value.value else { throw error(value, "groups must be a list, such as [ready]") }
            var names: Set<String> = []
            for group in groups { names.insert(try string(group)) }
            settings.groups = names
        }
        let kind: CheckKind
        switch type {
        case "tcp":
            guard let host = fields["host"], let port = fields["port"] else { throw error(node, "a tcp check needs host and port") }
            let number = try integer(port)
            guard (1...65535).contains(number) else { throw error(port, "port must be 1 to 65535") }
            kind = .tcp(host: try string(host), port: number)
        case "http":
            guard let urlNode = fields["url"] else { throw error(node, "an http check needs url") }
            let text = try string(urlNode)
            if text.hasPrefix("https://") {
                throw error(urlNode, "https is not supported by the built-in http check; use an exec check with check_http --ssl")
            }
            guard let url = HTTPURL(text) else { throw error(urlNode, "url must be http://host[:port]/path, not '\(text)'") }
            var expected = 200...399
            if let status = fields["expect_status"] { expected = try statusRange(status) }
            kind = .http(url: url, expectedStatus: expected, bodyContains: try fields["body_contains"].map { node throws(ConfigurationError) in try string(node) })
        case "exec":
            guard let commandNode = fields["command"] else { throw error(node, "an exec check needs command") }
            let shell = try fields["shell"].map { node throws(ConfigurationError) in try boolean(node) } ?? false
            var command: [String]
            switch commandNode.value {
            case .sequence(let parts):
                command = []
                for part in parts { command.append(try string(part)) }
                if shell { throw error(commandNode, "with shell: true, command is one string") }
            default:
                let text = try string(commandNode)
                command = shell ? ["/bin/sh", "-c", text] : text.split(separator: " ").map(String.init)
            }
            guard let program = command.first, program.hasPrefix("/") else {
                throw error(commandNode, "command must start with an absolute path (there is no PATH search), such as /usr/lib/nagios/plugins/check_disk")
            }
            var environment: [String: String] = [:]
            if let envNode = fields["environment"] {
                for (key, value) in try mapping(envNode, allowed: nil) { environment[key] = try string(value) }
            }
            kind = .exec(command: command, environment: environment)
        case "disk":
            let path = try fields["path"].map { node throws(ConfigurationError) in try string(node) } ?? "/"
            let warn = try fields["warn_free_percent"].map { node throws(ConfigurationError) in try number(node) } ?? 10
            let fail = try fields["fail_free_percent"].map { node throws(ConfigurationError) in try number(node) } ?? 5
            guard fail <= warn else { throw error(fields["fail_free_percent"] ?? node, "fail_free_percent must not exceed warn_free_percent") }
            kind = .disk(path: path, warnFreePercent: warn, failFreePercent: fail,
                         warnFreeBytes: try fields["warn_free_bytes"].map { node throws(ConfigurationError) in try number(node) },
                         failFreeBytes: try fields["fail_free_bytes"].map { node throws(ConfigurationError) in try number(node) })
        case "memory_pressure":
            let path = try fields["path"].map { node throws(ConfigurationError) in try string(node) } ?? "/proc/pressure/memory"
            let warn = try fields["warn_avg10"].map { node throws(ConfigurationError) in try number(node) } ?? 10
            let fail = try fields["fail_avg10"].map { node throws(ConfigurationError) in try number(node) } ?? 40
            guard warn <= fail else { throw error(fields["warn_avg10"] ?? node, "warn_avg10 must not exceed fail_avg10") }
            kind = .memoryPressure(path: path, warnAvg10: warn, failAvg10: fail)
        case "file":
            guard let path = fields["path"] else { throw error(node, "a file check needs path") }
            kind = .file(path: try string(path), maxAge: try fields["max_age"].map { node throws(ConfigurationError) in try duration(node) })
        default:
            kind = .container
        }
        return CheckConfiguration(name: name, kind: kind, settings: settings)
    }

    // MARK: Values

    private func mapping(_ node: YAMLNode, allowed: Set<String>?) throws(ConfigurationError) -> [String: YAMLNode] {
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

    private func string(_ node: YAMLNode) throws(ConfigurationError) -> String {
        guard case .scalar(let scalar) = node.value else { throw error(node, "expected a value, not a list or mapping") }
        return scalar
    }

    private func integer(_ node: YAMLNode) throws(ConfigurationError) -> Int {
        guard let value = Int(try string(node)) else { throw error(node, "expected a whole number") }
        return value
    }

    private func positive(_ node: YAMLNode) throws(ConfigurationError) -> Int {
        let value = try integer(node)
        guard value >= 1 else { throw error(node, "expected a number of at least 1") }
        return value
    }

    private func number(_ node: YAMLNode) throws(ConfigurationError) -> Double {
        guard let value = Double(try string(node)), value.isFinite, value >= 0 else { throw error(node, "expected a non-negative number") }
        return value
    }

    private func boolean(_ node: YAMLNode) throws(ConfigurationError) -> Bool {
        switch try string(node) {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(node, "expected true or false")
        }
    }

    private func statusRange(_ node: YAMLNode) throws(ConfigurationError) -> ClosedRange<Int> {
        let text = try string(node)
        let parts = text.split(separator: "-").map { Int($0.trimmingCharacters()) }
        if parts.count == 1, let code = parts[0], (100...599).contains(code) { return code...code }
        if parts.count == 2, let low = parts[0], let high = parts[1], (100...599).contains(low), (low...599).contains(high) {
            return low...high
        }
        throw error(node, "expect_status must be a status (200) or a range (200-299)")
    }

    /// `250us`, `10ms`, `5s`, `2m`, `1h`, or a plain number of seconds.
    private func duration(_ node: YAMLNode) throws(ConfigurationError) -> Duration {
        let text = try string(node)
        guard let parsed = Self.parseDuration(text), parsed > .zero else {
            throw error(node, "expected a positive duration such as 500ms, 10s or 2m, not '\(text)'")
        }
        return parsed
    }

    static func parseDuration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value.isFinite, value >= 0 else { return nil }
            return .nanoseconds(Int64(value * scale * 1e9))
        }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else { return nil }
        return .nanoseconds(Int64(seconds * 1e9))
    }

    // MARK: Errors

    private func error(_ node: YAMLNode?, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: node?.line ?? 1, column: node?.column ?? 1, message: message)
    }
}

extension Substring {
    func trimmingCharacters() -> Substring {
        var slice = self
        while slice.first == " " { slice = slice.dropFirst() }
        while slice.last == " " { slice = slice.dropLast() }
        return slice
    }
}

/// A whole small file as text, or nil.
func readFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = read(fd, &buffer, buffer.count)
        if count < 0 { return nil }
        if count == 0 { break }
        bytes += buffer[..<count]
        if bytes.count > 4 << 20 { return nil }
    }
    return String(decoding: bytes, as: UTF8.self)
}
