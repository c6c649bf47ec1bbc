#if canImport(Glibc)
import Glibc
#endif
import WeaveDI

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
            return .unhealthy(error: CheckFailure("statvfs \(path): \(String(cString: strerror(errno)))"))
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

/// PSI `some avg10` of a pressure file against warn and fail thresholds.
struct MemoryPressureCheck: HealthCheckable {
    let name: String
    let path: String
    let warnAvg10: Double
    let failAvg10: Double
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        guard let text = readFile(path) else {
            return .degraded(reason: "cannot read \(path): \(String(cString: strerror(errno))); memory pressure unknown")
        }
        let reading: PressureStallInformation
        do {
            reading = try PressureStallInformation.parse(text)
        } catch {
            return .unhealthy(error: CheckFailure("\(path): \(error)"))
        }
        let avg10 = reading.some.avg10
        observations.record(name, value: avg10, unit: "%")
        let description = "memory pressure some avg10=\(avg10)%"
        if avg10 >= failAvg10 { return .unhealthy(error: CheckFailure(description)) }
        if avg10 >= warnAvg10 { return .degraded(reason: description) }
        return .healthy
    }
}

/// A file exists and, optionally, was modified no longer than `maxAge` ago (heartbeats of cron jobs).
struct FileCheck: HealthCheckable {
    let name: String
    let path: String
    let maxAge: Duration?
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .unhealthy(error: CheckFailure("\(path): \(String(cString: strerror(errno)))"))
        }
        let age = WallClock.now() - (Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        observations.record(name, value: (age * 10).rounded() / 10, unit: "s")
        if let maxAge {
            let limit = maxAge.totalSeconds
            if age > limit { return .unhealthy(error: CheckFailure("\(path) is \(Int(age)) s old, more than \(Int(limit)) s")) }
        }
        return .healthy
    }
}

/// The daemon's own container: unhealthy when resolution errors happened since the last run,
/// degraded when slow resolutions did.
/// The check lives inside the container it watches (a singleton there), so it holds the container
/// weakly: a strong reference would be a cycle, and every reload would leak the old runtime.
final class ContainerCheck: HealthCheckable {
    private let statistics: @Sendable () -> ContainerStatistics?
    private let last = Locked<(errors: UInt64, slow: UInt64)?>(nil)

    init(container: Container) {
        statistics = { [weak container] in container?.statistics() }
    }

    func healthCheck() async -> HealthStatus {
        guard let statistics = statistics() else { return .unhealthy(error: CheckFailure("the container is gone")) }
        let errors = statistics.services.reduce(0) { $0 + $1.errorCount }
        let slow = statistics.services.reduce(0) { $0 + $1.slowResolutions }
        let previous = last.withLock { value in defer { value = (errors, slow) }; return value } ?? (errors: errors, slow: slow)
        if errors > previous.errors { return .unhealthy(error: CheckFailure("\(errors - previous.errors) resolution errors since the last check")) }
        if slow > previous.slow { return .degraded(reason: "\(slow - previous.slow) slow resolutions since the last check") }
        return .healthy
    }
}
