import WeaveHealthServer
import WeaveSupport

/// weave-healthd's command line: the file to run or check. The options that only answer (`--reload`,
/// `--version`, `--print-default-config`, `--help`) answer and exit as they are read.
struct DaemonOptions {
    static let usage = """
        Usage: weave-healthd [--config FILE]
               weave-healthd --check-config FILE
               weave-healthd --reload PID
               weave-healthd --print-default-config | --version | --help

        Without --config it runs its embedded default configuration: 127.0.0.1:\(Defaults.port), the
        applications that serve a socket in \(AppSocket.defaultDirectory), and checks of memory
        pressure, disk space on /, its own container and its own port.
        Exit status: 0 after a graceful shutdown (SIGTERM, SIGINT), 64 on a usage error,
        78 on a bad configuration (printed as file:line:column: message). SIGHUP reloads the file.
        --reload PID (the units' ExecReload=, with $MAINPID) sends the SIGHUP and waits for the daemon's
        verdict in $RUNTIME_DIRECTORY: 0 when it reloaded, 1 (and why) when it kept its configuration.

        """

    /// The file given with `--config` or `--check-config`; nil runs the embedded default.
    var path: String?
    /// `--check-config`: check the file, say so, and exit.
    var checkOnly = false

    /// Reads `arguments` (without the program's name); exits with 64 on a usage error.
    static func parse(_ arguments: [String]) async -> DaemonOptions {
        var options = DaemonOptions()
        var arguments = arguments[...]
        while let argument = arguments.popFirst() {
            switch argument {
            case "--config", "--check-config":
                guard let value = arguments.popFirst() else { Daemon.fail("weave-healthd: \(argument) needs a file; see --help", Daemon.ExitCode.usage) }
                options.path = value
                options.checkOnly = argument == "--check-config"
            case "--reload":
                guard let value = arguments.popFirst(), arguments.isEmpty else {
                    Daemon.fail("weave-healthd: --reload needs the daemon's process id; see --help", Daemon.ExitCode.usage)
                }
                let (status, message) = await ReloadVerdict.ask(pid: value)
                if status == 0 { print(message) } else { Daemon.fail(message, status) }
                exit(status)
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
                Daemon.fail("weave-healthd: unknown argument '\(argument)'; see --help", Daemon.ExitCode.usage)
            }
        }
        return options
    }

    /// The configuration to run: the file's, or the embedded default; exits with 78 (and
    /// file:line:column: message) when it is bad, and with 0 after `--check-config` says it is good.
    func configuration() -> DaemonConfiguration {
        let configuration: DaemonConfiguration
        do {
            configuration = try path.map { path throws(ConfigurationError) in try ConfigurationLoader.load(path: path) }
                ?? ConfigurationLoader(file: "<embedded default>", text: Defaults.configuration).parse()
        } catch {
            Daemon.fail("\(error)", Daemon.ExitCode.config)
        }
        if checkOnly, let path {
            let apps = configuration.apps
            print("\(path): OK, \(configuration.checks.count) checks, \(apps.targets.count) applications"
                + (apps.directory.map { " plus those in \($0)" } ?? "")
                + ", listening on \(configuration.listeners.map(\.description).joined(separator: ", "))")
            exit(0)
        }
        return configuration
    }
}
