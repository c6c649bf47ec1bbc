import WeaveHealth
import WeavePrometheus
import WeaveReaders
import WeaveSupport

/// Runs a command with Nagios plugin semantics: exit 0 healthy, 1 degraded, 2 unhealthy, 3 or
/// anything else unhealthy ("unknown"); the first line of output is the reason; perfdata is kept.
/// No shell unless the configuration asks for one; a minimal environment; output capped at 4 KiB;
/// the plugin runs in a process group of its own, which is killed whole when the check is cancelled
/// (its timeout) and when the plugin exits (so nothing it started outlives the check).
struct ExecCheck: HealthCheckable {
    let name: String
    let command: [String]
    let environment: [String: String]
    let observations: Observations

    static let outputLimit = 4_096
    static let baseEnvironment = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"]

    func healthCheck() async -> HealthStatus {
        let result: (status: Int32, output: String)
        do {
            result = try await run()
        } catch {
            return .unhealthy(error: CheckFailure("cannot run \(command[0]): \(error)"))
        }
        let output = NagiosOutput(result.output)
        // The first item of each label: a plugin that repeats a label must not make duplicate series.
        var labels: Set<String> = []
        observations.record(name, of: Options.self, output.perfdata.filter { labels.insert($0.label).inserted })
        observations.record(name, value: Double(result.status), unit: "exit")
        let reason = output.text.isEmpty ? "exit status \(result.status)" : output.text
        switch result.status {
        case 0: return .healthy
        case 1: return .degraded(reason: reason)
        case 2: return .unhealthy(error: CheckFailure(reason))
        default: return .unhealthy(error: CheckFailure("unknown: \(reason)"))
        }
    }

    private func run() async throws -> (Int32, String) {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw CheckFailure("pipe: \(SystemError.text(errno))") }
        _ = fcntl(pipe[0], F_SETFL, fcntl(pipe[0], F_GETFL) | O_NONBLOCK)
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        posix_spawn_file_actions_addclose(&actions, pipe[1])
        // Nothing else of the daemon's reaches the plugin: not its listening sockets, not its journal
        // socket (a plugin that outlives a timeout must not keep the port bound).
        for descriptor in Self.openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        // The spawning thread's signal mask and dispositions must not reach the plugin: a plugin
        // started with SIGALRM or SIGTERM blocked never times itself out and ignores being stopped.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0) // a group of its own, named by the plugin's pid
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let env = Self.baseEnvironment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }.sorted()
        var pid = pid_t()
        let status = withCStrings(command) { argv in
            withCStrings(env) { envp in posix_spawn(&pid, command[0], &actions, &attributes, argv, envp) }
        }
        close(pipe[1])
        guard status == 0 else {
            close(pipe[0])
            throw CheckFailure(SystemError.text(status))
        }
        let reader = pipe[0]
        let child = pid
        defer {
            close(reader)
            kill(-child, SIGKILL) // whatever the plugin left running in its group
        }
        return try await withTaskCancellationHandler {
            var output: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4_096)
            var exitStatus: Int32 = 0
            var exited = false
            while true {
                let count = read(reader, &buffer, buffer.count)
                if count > 0 {
                    if output.count < Self.outputLimit { output += buffer[..<min(count, Self.outputLimit - output.count)] }
                    continue
                }
                if !exited {
                    var raw: Int32 = 0
                    if waitpid(child, &raw, WNOHANG) == child {
                        exited = true
                        exitStatus = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                        continue // drain what is left
                    }
                } else if count <= 0 {
                    break
                }
                if Task.isCancelled { throw CancellationError() }
                try await Task.sleep(for: .milliseconds(5))
            }
            return (exitStatus, String(decoding: output, as: UTF8.self))
        } onCancel: {
            kill(-child, SIGKILL)
            var raw: Int32 = 0
            _ = waitpid(child, &raw, 0)
        }
    }
}

extension ExecCheck {
    /// `type: exec`: `command` (a list, or one string split at spaces; with `shell: true` one string
    /// for `/bin/sh -c`), `environment`.
    struct Options: CheckOptions {
        static let typeName = "exec"
        static let keys: Set<String> = ["command", "shell", "environment"]
        let command: [String]
        let environment: [String: String]

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            let commandNode = try fields.required("command")
            let shell = try fields.boolean("shell") ?? false
            var command: [String]
            if case .sequence = commandNode.value {
                if shell { throw fields.loader.error(commandNode, "with shell: true, command is one string") }
                command = try fields.strings("command")!
            } else {
                let text = try fields.loader.string(commandNode)
                command = shell ? ["/bin/sh", "-c", text] : text.split(separator: " ").map(String.init)
            }
            guard let program = command.first, program.hasPrefix("/") else {
                throw fields.loader.error(commandNode, "command must start with an absolute path (there is no PATH search), such as /usr/lib/nagios/plugins/check_disk")
            }
            self.command = command
            var environment: [String: String] = [:]
            if let envNode = fields["environment"] {
                for (key, value) in try fields.loader.mapping(envNode, allowed: nil) { environment[key] = try fields.loader.string(value) }
            }
            self.environment = environment
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            ExecCheck(name: context.name, command: command, environment: environment, observations: context.observations)
        }
    }

    /// The process's open descriptors, from /proc/self/fd (glibc's closefrom action is not visible
    /// to Swift). A close action for one closed meanwhile is harmless: glibc ignores EBADF there.
    static func openDescriptors() -> [Int32] {
        ((try? directoryNames("/proc/self/fd").get()) ?? []).compactMap { Int32($0) }
    }
}

/// Runs `body` with `strings` as a NULL-terminated C array.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}

extension ExecCheck.Options: CheckMetrics {
    static let familyPrefix = "weave_check_perfdata"

    /// The perfdata of the exec checks, `{check,label}`, one family per kind of unit so that each
    /// name says its unit: `weave_check_perfdata_seconds`, `_bytes`, `_ratio`, `_total` (unit `c`,
    /// a counter) and `_value` (no unit).
    static func families(_ observations: Observations) -> [MetricFamily] {
        var samples: [Perfdata.Kind: [([(String, String)], Double)]] = [:]
        for (check, items) in observations.all(of: Self.self, as: [Perfdata].self).sorted(by: { $0.key < $1.key }) {
            for item in items { samples[item.kind, default: []].append(([("check", check), ("label", item.label)], item.value)) }
        }
        let help = "Perfdata of exec checks (Nagios plugins)"
        return [
            .gauge("weave_check_perfdata_seconds", help + " measured in time, in seconds.", unit: "seconds", samples[.seconds] ?? []),
            .gauge("weave_check_perfdata_bytes", help + " measured in bytes (B, KB, MB, GB, TB).", unit: "bytes", samples[.bytes] ?? []),
            .gauge("weave_check_perfdata_ratio", help + " given in percent, as a ratio (80% is 0.8).", unit: "ratio", samples[.ratio] ?? []),
            .counter("weave_check_perfdata", help + " that are continuous counters (unit c).", samples[.counter] ?? []),
            .gauge("weave_check_perfdata_value", help + " without a unit.", samples[.plain] ?? []),
        ]
    }
}
