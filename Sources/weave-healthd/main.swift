#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOPosix
import ServiceLifecycle
import WeaveDI
import WeaveHealthServer

/// weave-healthd: exports a WeaveDI container's figures and health checks as Prometheus metrics
/// and health endpoints.
let usage = """
    Usage: weave-healthd [--config FILE]
           weave-healthd --check-config FILE
           weave-healthd --print-default-config | --version | --help

    Without --config it runs its embedded default configuration: 127.0.0.1:\(Defaults.port), checks of
    memory pressure, disk space on /, its own container and its own port.
    Exit status: 0 after a graceful shutdown (SIGTERM, SIGINT), 64 on a usage error,
    78 on a bad configuration (printed as file:line:column: message). SIGHUP reloads the file.

    """

enum ExitCode {
    static let usage: Int32 = 64
    static let config: Int32 = 78
}

func fail(_ message: String, _ code: Int32) -> Never {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(code)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var configPath: String?
var checkOnly = false
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--config", "--check-config":
        guard let value = arguments.first else { fail("weave-healthd: \(argument) needs a file; see --help", ExitCode.usage) }
        arguments.removeFirst()
        configPath = value
        checkOnly = argument == "--check-config"
    case "--version":
        print("weave-healthd \(Defaults.version)")
        exit(0)
    case "--print-default-config":
        print(Defaults.configuration, terminator: "")
        exit(0)
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    default:
        fail("weave-healthd: unknown argument '\(argument)'; see --help", ExitCode.usage)
    }
}

let configuration: DaemonConfiguration
do {
    configuration = try configPath.map { path throws(ConfigurationError) in try ConfigurationLoader.load(path: path) }
        ?? ConfigurationLoader(file: "<embedded default>", text: Defaults.configuration).parse()
} catch {
    fail("\(error)", ExitCode.config)
}
var bearerToken: String?
if let tokenFile = configuration.bearerTokenFile {
    guard let token = readFile(tokenFile)?.trimmed(), !token.isEmpty else {
        fail("\(configPath ?? "<embedded default>"):1:1: bearer_token_file \(tokenFile) is missing or empty", ExitCode.config)
    }
    bearerToken = token
}
if checkOnly {
    print("\(configPath!): OK, \(configuration.checks.count) checks, listening on \(configuration.listeners.map(\.description).joined(separator: ", "))")
    exit(0)
}

let logLevel = getenv("WEAVE_LOG_LEVEL").flatMap { Logger.Level(rawValue: String(cString: $0)) } ?? .info
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = logLevel
    return handler
}
let logger = Logger(label: "weave.healthd")
UnifiedDI.slowResolutionThreshold = configuration.slowResolutionThreshold
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let lifecycle = ServerLifecycle()
let source = DaemonSource(await Runtime(configuration: configuration, group: group))
let serverConfiguration = HealthServerConfiguration(
    listeners: configuration.listeners, detailsPolicy: configuration.detailsPolicy, bearerToken: bearerToken,
    statusCodes: configuration.statusCodes, version: Defaults.version)
let server = HealthServer(router: HealthRouter(configuration: serverConfiguration, source: source, lifecycle: lifecycle), group: group)
let (reloads, reloadContinuation) = AsyncStream<Void>.makeStream()

var groupConfiguration = ServiceGroupConfiguration(
    services: [
        // Listed in start order; graceful shutdown runs in reverse: reloads stop, then the server fails
        // readiness and drains, then the checks are cancelled.
        .init(service: MonitorService(source: source, lifecycle: lifecycle, reloads: reloads, logger: logger)),
        .init(service: server),
        .init(service: ReloadService(path: configPath, source: source, group: group, reloaded: reloadContinuation, logger: logger)),
    ],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger)
groupConfiguration.maximumGracefulShutdownDuration = .seconds(2)
do {
    try await ServiceGroup(configuration: groupConfiguration).run()
} catch {
    logger.error("weave-healthd stopped: \(error)")
    exit(1)
}
logger.info("Stopped")
exit(0)
