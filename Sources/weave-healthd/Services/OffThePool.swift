import Dispatch

/// Runs blocking work (getaddrinfo, reading a configuration that names hosts and files) on a
/// Dispatch thread, never on the event loop or Swift's cooperative pool, which serve `/livez` and
/// run the checks: a resolver that waits for a dead DNS server holds only that thread.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}
