import WeaveObservability

/// What the status page shows of an application's container: its version and start, and its
/// slowest dependencies with their resolves per second, from two successive `/dependencies` reads.
struct AppDependencies: Sendable {
    let summary: DependencySummary
    /// When it was read, in seconds since the Unix epoch.
    let readAt: Double
    /// Resolves per second since the read before, by dependency name; absent for a dependency the
    /// read before did not list (or for the first read).
    let rates: [String: Double]

    /// The largest `/dependencies` answer read from an application (100 dependencies and 20
    /// startup runs with long names).
    static let maxBytes = 128 << 10

    /// `summary` read at `time`, its rates taken against `previous` (the same application's last read).
    init(_ summary: DependencySummary, at time: Double, after previous: AppDependencies?) {
        self.summary = summary
        readAt = time
        var rates: [String: Double] = [:]
        if let previous, time > previous.readAt {
            let before = Dictionary(previous.summary.dependencies.map { ($0.name, $0.resolutions) }) { first, _ in first }
            for dependency in summary.dependencies {
                // A count that went down is a restarted application: no rate until the next read.
                guard let count = before[dependency.name], dependency.resolutions >= count else { continue }
                rates[dependency.name] = Double(dependency.resolutions - count) / (time - previous.readAt)
            }
        }
        self.rates = rates
    }
}
