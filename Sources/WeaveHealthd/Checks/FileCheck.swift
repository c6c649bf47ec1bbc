import WeaveHealth
import WeaveSupport

/// A file exists and, optionally, was modified no longer than `maxAge` ago (heartbeats of cron jobs).
struct FileCheck: HealthCheckable {
    let name: String
    let path: String
    let maxAge: Duration?
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .unhealthy(error: CheckFailure("\(path): \(SystemError.text(errno))"))
        }
        let age = WallClock.now() - (Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        observations.record(name, value: (age * 10).rounded() / 10, unit: "s")
        if let maxAge {
            let limit = maxAge.totalSeconds
            if age > limit {
                // A file's time is anyone's who can write it: one set to the year -292 billion is as
                // old as a Double says (`Int(age)` trapped).
                let old = Int(checked: age).map(String.init) ?? "\(age)"
                return .unhealthy(error: CheckFailure("\(path) is \(old) s old, more than \(Int(limit)) s"))
            }
        }
        return .healthy
    }
}

extension FileCheck {
    /// `type: file`: `path`, `max_age`.
    struct Options: CheckOptions {
        static let typeName = "file"
        static let keys: Set<String> = ["path", "max_age"]
        let path: String
        let maxAge: Duration?

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            path = try fields.loader.string(try fields.required("path"))
            maxAge = try fields.duration("max_age", atMost: .seconds(100 * 366 * 86_400), "100 years")
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            FileCheck(name: context.name, path: path, maxAge: maxAge, observations: context.observations)
        }
    }
}
