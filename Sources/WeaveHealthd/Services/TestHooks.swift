import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import WeaveDI
import WeaveSupport

#if DEBUG
/// Faults for the integration tests, in debug builds only (the package's release build has none),
/// enabled with `WEAVE_HEALTHD_TEST_HOOKS=1`:
/// SIGUSR1 blocks the event loop for 3 s (the watchdog pings must stop), SIGUSR2 makes 1,000
/// failing resolves in a hot loop (the log must summarise them).
struct TestHooksService: Service {
    let source: DaemonSource
    let group: any EventLoopGroup
    let logger: Logger

    static var isEnabled: Bool { getenv("WEAVE_HEALTHD_TEST_HOOKS").map { String(cString: $0) } == "1" }

    /// A service nobody registers.
    private struct Unregistered {}

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigusr1, .sigusr2)
        for await signal in signals.cancelOnGracefulShutdown() {
            if signal == .sigusr1 {
                logger.notice("Test hook: blocking the event loop for 3 s")
                group.any().execute { sleep(3) }
            } else {
                logger.notice("Test hook: 1,000 failing resolves")
                Self.resolveMissing(1_000, in: source.runtime.container)
            }
        }
    }

    /// Synchronous, so the optional `resolve` is the one called (in async code Swift picks the throwing one).
    private static func resolveMissing(_ count: Int, in container: Container) {
        for _ in 0..<count { _ = container.resolve(Unregistered.self) }
    }
}
#endif
