import Glibc
import Testing
@testable import WeaveHealthd
import WeaveSupport
import WeaveTestSupport

@Suite struct BlockingCallsTests {
    /// A call that never returns (a read from a FIFO nobody writes) costs its caller one slot: the
    /// caller's next call is refused at once instead of taking another thread, other callers still
    /// run, and the stuck one is answered at its deadline.
    @Test func aStuckCallHoldsOneSlotAndItsCallerWaitsNoMore() async throws {
        let calls = BlockingCalls(maxThreads: 2, maxWaiting: 4)
        var pipe: [Int32] = [0, 0]
        #expect(Glibc.pipe(&pipe) == 0)
        defer { close(pipe[1]) }
        let reader = pipe[0]
        let first = Task { () -> String in
            do {
                return try await calls.run("stalled", lane: .files, deadline: .milliseconds(200)) { () -> String in
                    var byte: UInt8 = 0
                    _ = read(reader, &byte, 1) // blocks until the test writes
                    close(reader)
                    return "read"
                }
            } catch {
                return "\(error)"
            }
        }
        #expect(await first.value.hasPrefix("no answer within 0.2"))
        // Still stuck: the same caller is refused at once, another caller runs on the other thread.
        await #expect(throws: BlockingCallFailure.self) { try await calls.run("stalled", lane: .files, deadline: .seconds(5)) { 1 } }
        #expect(try await calls.run("other", lane: .files, deadline: .seconds(30)) { 2 } == 2)
        // The other call's thread answers before it gives its slot back: wait for that, briefly.
        await eventually { calls.running <= 1 }
        #expect(calls.running == 1, "the stuck call keeps its thread, and only it")
        // Unstuck: the caller's key is free again.
        var byte: UInt8 = 1
        #expect(write(pipe[1], &byte, 1) == 1)
        await eventually { calls.running == 0 }
        #expect(try await calls.run("stalled", lane: .files, deadline: .seconds(30)) { 3 } == 3)
    }

    /// A system bus that never answers holds the bus lane only: with its threads taken and its
    /// queue full, a DNS lookup and a file read still run at once.
    @Test func aStuckLaneHoldsOnlyItsOwnCalls() async throws {
        let calls = BlockingCalls(maxThreads: 1, maxWaiting: 1)
        let gate = Locked(false)
        let stuck = Task {
            try await calls.run("unit a", lane: .bus, deadline: .seconds(30)) { () -> Int in
                while !gate.withLock({ $0 }) { usleep(1_000) }
                return 1
            }
        }
        await eventually { calls.running > 0 }
        let queued = Task { try await calls.run("unit b", lane: .bus, deadline: .seconds(30)) { 2 } }
        try await Task.sleep(for: .milliseconds(50))
        await #expect(throws: BlockingCallFailure.self) { try await calls.run("unit c", lane: .bus, deadline: .seconds(30)) { 3 } }
        #expect(try await calls.run("dns localhost", lane: .dns, deadline: .seconds(30)) { 4 } == 4)
        #expect(try await calls.run("textfiles", lane: .files, deadline: .seconds(30)) { 5 } == 5)
        gate.withLock { $0 = true }
        #expect(try await stuck.value == 1)
        #expect(try await queued.value == 2)
    }

    /// Past its threads and its queue, a call is refused, not started on a new thread.
    @Test func callsPastTheThreadsWaitAndPastTheQueueAreRefused() async throws {
        let calls = BlockingCalls(maxThreads: 1, maxWaiting: 1)
        let gate = Locked(false)
        let holding = Task {
            try await calls.run("a", lane: .files, deadline: .seconds(30)) { () -> Int in
                while !gate.withLock({ $0 }) { usleep(1_000) }
                return 1
            }
        }
        await eventually { calls.running > 0 }
        let waiting = Task { try await calls.run("b", lane: .files, deadline: .seconds(30)) { 2 } }
        try await Task.sleep(for: .milliseconds(50))
        do {
            _ = try await calls.run("c", lane: .files, deadline: .seconds(30)) { 3 }
            Issue.record("a third call was started")
        } catch {
            #expect("\(error)".contains("all 1 threads for blocking files calls are taken"))
        }
        gate.withLock { $0 = true }
        #expect(try await holding.value == 1)
        #expect(try await waiting.value == 2)
    }
}
