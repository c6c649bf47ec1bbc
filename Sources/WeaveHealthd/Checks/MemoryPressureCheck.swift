import WeaveHealth
import WeaveMemoryPressure
import WeaveSupport

/// PSI `some avg10` of a pressure file against warn and fail thresholds.
struct MemoryPressureCheck: HealthCheckable {
    let name: String
    let path: String
    let warnAvg10: Double
    let failAvg10: Double
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        let text: String
        switch readTextFile(path, limit: 65_536) {
        case .success(let contents): text = contents
        case .failure(let failure): return .degraded(reason: "cannot read \(path): \(failure); memory pressure unknown")
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

extension MemoryPressureCheck {
    /// `type: memory_pressure`: `path` (/proc/pressure/memory), `warn_avg10` (10), `fail_avg10` (40).
    struct Options: CheckOptions {
        static let typeName = "memory_pressure"
        static let keys: Set<String> = ["path", "warn_avg10", "fail_avg10"]
        let path: String
        let warnAvg10: Double
        let failAvg10: Double

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            path = try fields.string("path") ?? "/proc/pressure/memory"
            warnAvg10 = try fields.number("warn_avg10", atMost: 100) ?? 10
            failAvg10 = try fields.number("fail_avg10", atMost: 100) ?? 40
            guard warnAvg10 <= failAvg10 else { throw fields.error("warn_avg10", "warn_avg10 must not exceed fail_avg10") }
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            MemoryPressureCheck(name: context.name, path: path, warnAvg10: warnAvg10, failAvg10: failAvg10, observations: context.observations)
        }
    }
}
