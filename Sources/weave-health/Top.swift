import WeaveHealth
import WeaveReaders
import WeaveSupport

/// `weave-health top`: fetches `/metrics` (or reads `--file`) and shows `MetricsTable`,
/// once or every `--watch` interval until interrupted.
enum Top {
    static func run(_ options: ProbeOptions, target: ProbeTarget, color: Bool) -> Int32 {
        while true {
            // One deadline for the whole round: fetching, parsing, and the reasons of down applications.
            let deadline = ContinuousClock.now + options.timeout
            let text: [UInt8]
            let source: String
            if let file = options.metricsFile {
                guard let contents = ProbeOptions.read(file) else {
                    write("weave-health: cannot read \(file)\n", to: 2)
                    return 1
                }
                (text, source) = (Array(contents.utf8), file)
            } else {
                let http = HTTPProbe(target: target, connectTimeout: options.connectTimeout, deadline: deadline)
                do {
                    let reply = try http.get("/metrics", accept: "text/plain;version=0.0.4")
                    guard reply.status == 200 else { throw ProbeError.badResponse("HTTP \(reply.status) from /metrics") }
                    (text, source) = (reply.body, target.description)
                } catch {
                    if options.watch == nil {
                        write("weave-health: \(error) (\(target))\n", to: 2)
                        return 1
                    }
                    (text, source) = ([], "\(target): \(error)")
                }
            }
            let table: String
            do {
                let metrics = try MetricsTable(exposition: text, includeOwn: options.includeOwn,
                                               deadline: options.metricsFile == nil ? deadline : nil)
                let reasons = metrics.downApps.isEmpty || options.metricsFile != nil ? [:] : downReasons(options, target: target, deadline: deadline)
                table = metrics.render(source: source, limit: options.limit, color: color, reasons: reasons)
            } catch {
                write("weave-health: \(source) is not a valid exposition: \(error)\n", to: 2)
                guard options.watch != nil else { return 1 }
                table = "weave-health top - \(source): not a valid exposition: \(error)\n"
            }
            guard let interval = options.watch else {
                write(table, to: 1)
                return 0
            }
            write("\u{1B}[H\u{1B}[2J" + table, to: 1)
            let nanoseconds = interval.nonNegativeNanoseconds
            var pause = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
            var left = timespec()
            while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
        }
    }

    /// Why each application is down, as the daemon's `/health` says (its `<app>` component's output);
    /// empty when `/health` cannot be read or shows no details.
    private static func downReasons(_ options: ProbeOptions, target: ProbeTarget, deadline: ContinuousClock.Instant) -> [String: String] {
        let http = HTTPProbe(target: target, connectTimeout: options.connectTimeout, deadline: deadline)
        guard let reply = try? http.get("/health", accept: "application/health+json"),
              let document = try? HealthDocument(reply.body) else { return [:] }
        var reasons: [String: String] = [:]
        for check in document.checks where check.state == .unhealthy { reasons[check.name] = check.output }
        return reasons
    }
}
