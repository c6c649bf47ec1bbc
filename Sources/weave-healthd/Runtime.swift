import Logging
import NIOCore
import WeaveDI
import WeavePrometheus

/// What one configuration runs: the daemon's own instrumented container, in which every check is a
/// registered `HealthCheckable` service (so `/metrics` shows the daemon's resolve timings too), and
/// the health monitor over it.
final class Runtime: Sendable {
    let configuration: DaemonConfiguration
    let container: Container
    let monitor: HealthMonitor
    let observations = Observations()

    init(configuration: DaemonConfiguration, group: any EventLoopGroup) async {
        self.configuration = configuration
        container = Container()
        let defaults = HealthCheckSettings(interval: .seconds(15), timeout: .seconds(5))
        monitor = HealthMonitor(container: container, defaultSettings: defaults)
        for check in configuration.checks {
            let make = Self.factory(for: check, container: container, group: group, observations: observations)
            container.register(check.name, (any HealthCheckable).self, scope: .singleton, factory: make)
            await monitor.configure(check.name, settings: check.settings)
        }
    }

    private static func factory(for check: CheckConfiguration, container: Container, group: any EventLoopGroup,
                                observations: Observations) -> @Sendable () -> any HealthCheckable {
        let name = check.name
        let timeout = check.settings.timeout
        switch check.kind {
        case .tcp(let host, let port):
            return { TCPCheck(name: name, host: host, port: port, timeout: timeout, group: group, observations: observations) }
        case .http(let url, let expected, let body):
            return { HTTPCheck(name: name, url: url, expectedStatus: expected, bodyContains: body, timeout: timeout, group: group,
                               observations: observations) }
        case .exec(let command, let environment):
            return { ExecCheck(name: name, command: command, environment: environment, observations: observations) }
        case .disk(let path, let warn, let fail, let warnBytes, let failBytes):
            return { DiskCheck(name: name, path: path, warnFreePercent: warn, failFreePercent: fail, warnFreeBytes: warnBytes,
                               failFreeBytes: failBytes, observations: observations) }
        case .memoryPressure(let path, let warn, let fail):
            return { MemoryPressureCheck(name: name, path: path, warnAvg10: warn, failAvg10: fail, observations: observations) }
        case .file(let path, let maxAge):
            return { FileCheck(name: name, path: path, maxAge: maxAge, observations: observations) }
        case .container:
            return { [unowned container] in ContainerCheck(container: container) } // made by the container itself
        }
    }

    /// `weave_check_perfdata{check,label}`: the perfdata of exec checks, in base units.
    var perfdataFamily: MetricFamily {
        var samples: [([(String, String)], Double)] = []
        for (check, items) in observations.allPerfdata.sorted(by: { $0.key < $1.key }) {
            for item in items { samples.append(([("check", check), ("label", item.label)], item.value)) }
        }
        return .gauge("weave_check_perfdata", "Perfdata of exec checks (Nagios plugins), converted to base units.", samples)
    }
}
