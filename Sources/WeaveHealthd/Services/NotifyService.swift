import Logging
import NIOCore
import ServiceLifecycle
import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
import WeaveSupport
import WeaveSystemd

/// Keeps systemd informed through sd_notify: `READY=1` once the listeners are bound and the first
/// health round has run (with `EXTEND_TIMEOUT_USEC` while that is slow), `STATUS=` on every change
/// of the aggregate, `WATCHDOG=1` while the event loop and the health scheduler make progress, and
/// `STOPPING=1` when graceful shutdown begins. Outside systemd it only logs the startup.
struct NotifyService: Service {
    let notifier: SystemdNotifier
    let server: HealthServer
    let source: DaemonSource
    let lifecycle: ServerLifecycle
    let group: any EventLoopGroup
    let logger: Logger
    /// READY=1 is sent after this long even if the first round has not finished.
    var startupTimeout: Duration = .seconds(30)

    func run() async throws {
        await withGracefulShutdownHandler {
            // Cancelled when graceful shutdown begins, which first says STOPPING=1.
            await cancelWhenGracefulShutdown {
                guard await waitForStartup() else { return }
                await reportUntilCancelled()
            }
        } onGracefulShutdown: {
            notifier.stopping()
        }
    }

    /// Waits for the listeners and the first round, then says READY=1; false if cancelled first.
    private func waitForStartup() async -> Bool {
        let clock = ContinuousClock()
        let start = clock.now
        var lastExtension = start
        while server.boundListeners == nil || !lifecycle.isStarted {
            let now = clock.now
            if now - start >= startupTimeout {
                logger.warning("The first health round is still running after \(startupTimeout); reporting ready anyway")
                lifecycle.markStarted()
                break
            }
            if now - lastExtension >= .seconds(1) {
                notifier.extendTimeout(by: .seconds(5))
                lastExtension = now
            }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return false }
        }
        notifier.ready()
        logger.info("weave-healthd \(Defaults.version) started",
                    metadata: WeaveEvent.startup.metadata([
                        "listen": "\((server.boundListeners ?? []).joined(separator: ", "))",
                        "checks": "\(source.runtime.configuration.checks.count)",
                        "startup_ms": "\((clock.now - start).totalNanoseconds / 1_000_000)",
                    ]))
        return true
    }

    /// STATUS= on every change, and the watchdog pings, until cancelled.
    private func reportUntilCancelled() async {
        let interval = notifier.watchdogInterval
        // Half the watchdog interval, and at least once a second for STATUS=.
        let tick = interval.map { min($0 / 2, .seconds(1)) } ?? .seconds(1)
        var status = ""
        while !Task.isCancelled {
            let runtime = source.runtime
            let line = Self.statusLine(runtime.monitor.latestReport, apps: runtime.apps.views())
            if line != status {
                notifier.status(line)
                status = line
            }
            if interval != nil, await isMakingProgress() { notifier.watchdog() }
            do { try await Task.sleep(for: tick) } catch { return }
        }
    }

    /// Progress means: a task submitted to the event loop runs, and the health scheduler finished
    /// a round or woke for one recently (within its longest check timeout and two ticks). While
    /// either is stuck, this does not return true, so the pings stop and systemd restarts the daemon.
    private func isMakingProgress() async -> Bool {
        guard (try? await group.any().submit({}).get()) != nil else { return false }
        let runtime = source.runtime
        let allowance = (runtime.configuration.checks.map(\.settings.timeout).max() ?? .zero) + .seconds(3)
        return ContinuousClock.now - (await runtime.monitor.lastProgress) <= allowance
    }

    /// `12 checks: 11 healthy, 1 degraded (disk-root); apps: 2 up, 1 down (inventory)`: the
    /// daemon's checks by state and the applications up and down (those not yet read are neither),
    /// with the names of what is not healthy or down, so that `systemctl status` agrees with `/health`.
    static func statusLine(_ report: HealthReport, apps: [AppFleet.AppView] = []) -> String {
        let byState = Dictionary(grouping: report.checks.values, by: \.status.state)
        var parts: [String] = []
        for state in HealthState.allCases {
            guard let records = byState[state], !records.isEmpty else { continue }
            var part = "\(records.count) \(state.rawValue)"
            if state != .healthy { part += " (\(records.map(\.name).sorted().joined(separator: ", ")))" }
            parts.append(part)
        }
        let count = report.checks.count
        var line = "\(count) check\(count == 1 ? "" : "s")" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
        guard !apps.isEmpty else { return line }
        let up = apps.filter { $0.reachable == true }.count
        let down = apps.filter { $0.reachable == false }.map(\.name)
        line += "; apps: \(up) up"
        if !down.isEmpty { line += ", \(down.count) down (\(down.joined(separator: ", ")))" }
        return line
    }
}
