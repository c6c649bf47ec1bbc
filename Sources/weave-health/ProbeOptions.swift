import WeaveReaders
import WeaveSupport

/// The probe's command line.
struct ProbeOptions {
    enum Mode: Equatable {
        case overall
        case live
        case ready
        case checks([String])
        case connectOnly
    }

    enum Output: Equatable {
        case human
        case json
        case nagios
        case quiet
    }

    var top = false
    /// `why APP/DEPENDENCY`.
    var why: (app: String, dependency: String)?
    var target: ProbeTarget?
    var configFile: String?
    var mode = Mode.overall
    var output = Output.human
    var strict = false
    var connectTimeout: Duration = .seconds(1)
    var timeout: Duration = .seconds(3)
    var watch: Duration?
    var limit = 20
    /// `top --own`: the daemon's own services too, beside its applications'.
    var includeOwn = false
    var metricsFile: String?
    var showVersion = false
    var showHelp = false

    /// A usage error: one line, and exit status 64.
    struct UsageError: Error {
        var message: String
    }

    init(_ arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        if let first = rest.first, first == "top" || first == "stats" {
            top = true
            rest = rest.dropFirst()
        } else if rest.first == "why" {
            rest = rest.dropFirst()
            // APP/DEPENDENCY: the application's name has no slash; the dependency's may.
            guard let subject = rest.first, let slash = subject.firstIndex(of: "/"), slash != subject.startIndex,
                  subject.index(after: slash) != subject.endIndex else {
                throw UsageError(message: "why needs APP/DEPENDENCY, such as orders/Database")
            }
            why = (String(subject[..<slash]), String(subject[subject.index(after: slash)...]))
            rest = rest.dropFirst()
        }
        var checks: [String] = []
        var modes: [String] = []
        func value(_ option: String) throws(UsageError) -> String {
            guard let next = rest.first, !next.hasPrefix("--") || next == "-" else { throw UsageError(message: "\(option) needs a value") }
            rest = rest.dropFirst()
            return next
        }
        while let argument = rest.first {
            rest = rest.dropFirst()
            var name = argument
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                rest = ArraySlice([String(argument[argument.index(after: equals)...])] + rest)
            }
            switch name {
            case "--url":
                let text = try value(name)
                guard let parsed = ProbeTarget(url: text) else {
                    throw UsageError(message: "--url must look like http://127.0.0.1:9096 or unix:/path, not '\(text)'")
                }
                target = parsed
            case "--unix":
                let path = try value(name)
                guard path.hasPrefix("/") else { throw UsageError(message: "--unix needs an absolute socket path") }
                target = .unix(path: path)
            case "--config": configFile = try value(name)
            case "--live": modes.append(name); mode = .live
            case "--ready": modes.append(name); mode = .ready
            case "--connect-only": modes.append(name); mode = .connectOnly
            case "--check":
                checks.append(try value(name))
                if !modes.contains("--check") { modes.append(name) }
            case "--strict": strict = true
            case "--json": output = .json
            case "--nagios": output = .nagios
            case "--quiet", "-q": output = .quiet
            case "--connect-timeout": connectTimeout = try Self.duration(try value(name), name)
            case "--timeout": timeout = try Self.duration(try value(name), name)
            case "--watch":
                if let next = rest.first, !next.hasPrefix("-") { watch = try Self.duration(next, name); rest = rest.dropFirst() }
                else { watch = .seconds(2) }
            case "--limit":
                let text = try value(name)
                guard let count = Int(text), count > 0 else { throw UsageError(message: "--limit needs a positive number") }
                limit = count
            case "--file": metricsFile = try value(name)
            case "--own": includeOwn = true
            case "--version": showVersion = true
            case "--help", "-h": showHelp = true
            default: throw UsageError(message: "unknown argument '\(argument)'")
            }
        }
        if !checks.isEmpty { mode = .checks(checks) }
        guard modes.count <= 1 else { throw UsageError(message: "\(modes.joined(separator: " and ")) cannot be combined") }
        guard connectTimeout <= timeout else { throw UsageError(message: "--connect-timeout cannot exceed --timeout") }
        if top && (mode != .overall || output == .nagios) { throw UsageError(message: "top takes --url/--unix/--config, --watch, --limit, --file, --own") }
        if why != nil && (mode != .overall || output != .human || strict) {
            throw UsageError(message: "why takes --url/--unix/--config, --connect-timeout and --timeout")
        }
        if !top && (watch != nil || metricsFile != nil || includeOwn) { throw UsageError(message: "--watch, --file and --own belong to 'weave-health top'") }
    }

    /// `3s`, `500ms`, `1.5` (seconds).
    static func duration(_ text: String, _ option: String) throws(UsageError) -> Duration {
        var number = Substring(text)
        var scale = 1.0
        if number.hasSuffix("ms") { number = number.dropLast(2); scale = 0.001 }
        else if number.hasSuffix("s") { number = number.dropLast() }
        guard let value = Double(number), value > 0, value <= 3_600 else {
            throw UsageError(message: "\(option) must be a positive duration such as 3s or 500ms, not '\(text)'")
        }
        return .nanoseconds(Int64(value * scale * 1e9))
    }

    /// The target: --url/--unix, else the first listener of --config, else $WEAVE_HEALTH_URL, else
    /// weave-healthd's default address.
    func resolvedTarget() throws(UsageError) -> ProbeTarget {
        if let target { return target }
        if let configFile {
            guard let text = Self.read(configFile) else { throw UsageError(message: "cannot read --config \(configFile)") }
            let found: ProbeTarget?
            do { found = try ProbeTarget.fromDaemonConfiguration(text) } catch {
                throw UsageError(message: "\(configFile):\(error.line):\(error.column): \(error.message)")
            }
            guard let target = found else {
                throw UsageError(message: "\(configFile): the first listen: entry is not an address this probe can use")
            }
            return target
        }
        if let environment = getenv("WEAVE_HEALTH_URL") {
            let text = String(cString: environment)
            guard let target = ProbeTarget(url: text) else { throw UsageError(message: "WEAVE_HEALTH_URL is not a URL: '\(text)'") }
            return target
        }
        return .daemonDefault
    }

    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[..<count]
            if bytes.count > 16 << 20 { return nil }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
