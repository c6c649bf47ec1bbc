import WeaveHealth
import WeaveSupport

/// Free space on the file system of a path, in percent and (optionally) bytes.
struct DiskCheck: HealthCheckable {
    let name: String
    let path: String
    let warnFreePercent: Double
    let failFreePercent: Double
    let warnFreeBytes: Double?
    let failFreeBytes: Double?
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else {
            return .unhealthy(error: CheckFailure("statvfs \(path): \(SystemError.text(errno))"))
        }
        let free = Double(info.f_bavail) * Double(info.f_frsize)
        let total = Double(info.f_blocks) * Double(info.f_frsize)
        let percent = total > 0 ? free / total * 100 : 0
        observations.record(name, value: (percent * 10).rounded() / 10, unit: "%")
        let description = "\(Int(percent.rounded()))% free (\(Int(free / 1_000_000)) MB) on \(path)"
        if percent < failFreePercent || (failFreeBytes.map { free < $0 } ?? false) {
            return .unhealthy(error: CheckFailure(description))
        }
        if percent < warnFreePercent || (warnFreeBytes.map { free < $0 } ?? false) {
            return .degraded(reason: description)
        }
        return .healthy
    }
}

extension DiskCheck {
    /// `type: disk`: `path` (/), `warn_free_percent` (10), `fail_free_percent` (5), `warn_free_bytes`, `fail_free_bytes`.
    struct Options: CheckOptions {
        static let typeName = "disk"
        static let keys: Set<String> = ["path", "warn_free_percent", "fail_free_percent", "warn_free_bytes", "fail_free_bytes"]
        let path: String
        let warnFreePercent: Double
        let failFreePercent: Double
        let warnFreeBytes: Double?
        let failFreeBytes: Double?

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            path = try fields.string("path") ?? "/"
            warnFreePercent = try fields.number("warn_free_percent", atMost: 100) ?? 10
            failFreePercent = try fields.number("fail_free_percent", atMost: 100) ?? 5
            guard failFreePercent <= warnFreePercent else {
                throw fields.error("fail_free_percent", "fail_free_percent must not exceed warn_free_percent")
            }
            warnFreeBytes = try fields.number("warn_free_bytes", atMost: 0x1p63)
            failFreeBytes = try fields.number("fail_free_bytes", atMost: 0x1p63)
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            DiskCheck(name: context.name, path: path, warnFreePercent: warnFreePercent, failFreePercent: failFreePercent,
                      warnFreeBytes: warnFreeBytes, failFreeBytes: failFreeBytes, observations: context.observations)
        }
    }
}
