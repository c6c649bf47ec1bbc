import Foundation

/// Runs `body` on a thread of its own, at the lowest scheduling priority, and returns what it returns.
///
/// For long synchronous test work (fuzz campaigns): Swift Testing runs synchronous tests on the
/// cooperative pool, which has two threads on a 2-core machine, and tens of seconds there hold back
/// every other suite's tasks, failing tests that wait on a clock; at nice 19 the campaign takes the
/// cores the other tests leave. `#expect` needs the test's task, so `body` returns what went wrong
/// and the test records it.
public func onThreadOfItsOwn<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19) // on Linux, the calling thread only
            continuation.resume(returning: body())
        }
    }
}
