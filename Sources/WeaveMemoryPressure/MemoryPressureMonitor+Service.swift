public import ServiceLifecycle

extension MemoryPressureMonitor: Service {
    /// Watches from here until graceful shutdown or cancellation: the monitor as one service of a
    /// `ServiceGroup`, whose thread starts and stops with it.
    public func run() async throws {
        start()
        defer { stop() }
        try? await gracefulShutdown()
    }
}
