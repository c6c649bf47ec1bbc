import WeaveSupport

/// weave-health: the probe for weave-healthd, for Docker HEALTHCHECK, Kubernetes exec probes,
/// systemd ExecStartPost=/ExecCondition=, Nagios/Icinga, and people at a terminal.
let help = """
    Usage: weave-health [TARGET] [WHAT] [OUTPUT] [--connect-timeout D] [--timeout D] [--strict]
           weave-health top [TARGET] [--watch [SECONDS]] [--limit N] [--file METRICS.txt] [--own]
           weave-health why APP/DEPENDENCY [TARGET]

    Asks weave-healthd how it is. Never takes longer than --timeout.

    TARGET   --url http://127.0.0.1:9096   --unix /run/weave-healthd/health.sock
             --config /etc/weave-healthd/config.yaml (its first listen: entry)
             default: $WEAVE_HEALTH_URL, else http://127.0.0.1:9096
    WHAT     (default) overall health, from /health
             --live | --ready      Kubernetes-style /livez or /readyz
             --check NAME          one check; repeat for several in one run; an application's
                                   component is APP/CHECK (orders/Database)
             --connect-only        only that the endpoint accepts a connection
    OUTPUT   (default) one line per check, coloured on a terminal unless NO_COLOR is set
             --json                the health+json document, plus the probe's own timing
             --nagios              Nagios plugin output and exit codes, with perfdata
             --quiet               nothing; the exit status says it all
    TIMEOUTS --connect-timeout 1s (default), --timeout 3s (the whole probe, default)

    Exit status: 0 healthy or degraded (--strict: degraded is 1); 1 unhealthy, unreachable,
    timed out or a bad response; 64 usage error, such as a --check name the daemon does not have.
    With --nagios: 0 OK, 1 WARNING, 2 CRITICAL (also unreachable and timeouts), 3 UNKNOWN (also an
    unknown --check name).

    top (or stats) reads /metrics and lists the slowest services by p50/p99 resolve time, with
    error counts and health; --watch refreshes it every 2 s (or SECONDS). From a daemon that
    aggregates applications it lists their services as APP/SERVICE; --own adds the daemon's own.

    why shows why an application's dependency was slow, from the daemon: the chain of factory runs
    of its last slow resolution and of its first resolution at startup, each with its total and
    self time (the rest is the runs nested in it). Exit status 1 when the daemon knows neither.

    Examples:
      Docker:      HEALTHCHECK --interval=10s --timeout=4s CMD ["weave-health", "--quiet"]
      Kubernetes:  livenessProbe:  {exec: {command: [weave-health, --live, --quiet]}, timeoutSeconds: 4}
                   readinessProbe: {exec: {command: [weave-health, --ready, --quiet]}, timeoutSeconds: 4}
      systemd:     ExecStartPost=/usr/bin/weave-health --ready --timeout 10s
                   ExecCondition=/usr/bin/weave-health --check database --quiet
      Nagios:      define command { command_name check_weave
                                    command_line /usr/bin/weave-health --nagios --url http://$HOSTADDRESS$:9096 }
      By hand:     weave-health --check disk-root --check memory-pressure
                   weave-health top --watch
                   weave-health why orders/ReportBuilder

    """

func write(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written <= 0 { if errno == EINTR { continue }; return }
        bytes = bytes.dropFirst(written)
    }
}

let options: ProbeOptions
let target: ProbeTarget
do {
    options = try ProbeOptions(Array(CommandLine.arguments.dropFirst()))
    if options.showHelp { write(help, to: 1); exit(0) }
    if options.showVersion { write("weave-health \(WeaveVersion.text)\n", to: 1); exit(0) }
    target = try options.resolvedTarget()
} catch {
    write("weave-health: \(error.message); try weave-health --help\n", to: 2)
    exit(64)
}

let color = isatty(1) == 1 && getenv("NO_COLOR") == nil
if options.top {
    exit(Top.run(options, target: target, color: color))
}
if let subject = options.why {
    exit(Why.run(subject, options, target: target))
}
exit(Probe.run(options, target: target, color: color))
