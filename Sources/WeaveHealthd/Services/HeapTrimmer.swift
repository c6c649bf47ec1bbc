import CMachine
import ServiceLifecycle
import Synchronization
import WeaveSupport

/// Gives the heap's free memory back to the system once the daemon has been quiet for `quiet` after
/// a burst of allocation: a scrape of applications, a round of their health. Between bursts that
/// follow each other closely (Prometheus scraping, several at once) the heap keeps its freed
/// megabytes (`weave_keep_freed_memory` in `Daemon.run`), which spares faulting them in again each
/// time; when the bursts stop, the memory goes back (idle RSS: Benchmarks/README.md).
final class HeapTrimmer: Service, Sendable {
    private let quiet: Duration
    private let trim: @Sendable () -> Void
    private let clock: ElapsedClock
    private let lastBurst = Mutex<Duration?>(nil)
    private let bursts: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    /// `trim` gives the memory back (glibc's malloc_trim; tests count the calls instead), when
    /// `clock` says the quiet period has passed.
    init(quiet: Duration = .seconds(1), clock: ElapsedClock = .continuous, trim: @escaping @Sendable () -> Void = { weave_trim_heap() }) {
        self.quiet = quiet
        self.clock = clock
        self.trim = trim
        (bursts, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// When the latest burst ended, by the trimmer's clock (nil before the first).
    var lastBurstEnd: Duration? { lastBurst.withLock { $0 } }

    /// Notes that a burst of allocation ended now.
    func burstEnded() {
        let now = clock.now
        lastBurst.withLock { $0 = now }
        continuation.yield()
    }

    func run() async throws {
        var trimmed: Duration?
        for await _ in bursts.cancelOnGracefulShutdown() {
            // Sleep until `quiet` has passed since the latest burst, however many came meanwhile (the
            // stream holds one more of them, already covered when it is read: it is skipped).
            while let last = lastBurstEnd, last + quiet > clock.now {
                do { try await cancelWhenGracefulShutdown { try await self.clock.sleep(until: last + self.quiet) } } catch { return }
            }
            let last = lastBurstEnd
            guard last != trimmed else { continue }
            trimmed = last
            trim()
        }
    }
}
