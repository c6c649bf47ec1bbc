import Glibc
import Testing
@testable import WeaveHealthd
import WeaveSupport
import WeaveTestSupport

/// The daemon's state files, saved by several callers at once (the applications' watches and their
/// rounds each save the event positions after reading).
@Suite struct StateFileTests {
    /// Saves asked at once are one after the other, not refused as busy: no failure is logged, and
    /// the file ends with the last change.
    @Test func savesAskedAtOnceLogNoFailureAndKeepTheLastChange() async throws {
        let path = "/tmp/weave-state-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
        defer { unlink(path) }
        let records = LogRecords()
        let file = StateFile(path: path, what: "the test's state", logger: records.logger)
        let state = Locked<(value: Int, changed: Bool)>((0, false))
        let blocking = BlockingCalls()
        await withTaskGroup(of: Void.self) { group in
            for value in 1...16 {
                group.addTask {
                    state.withLock { $0 = (max($0.value, value), true) }
                    await file.saveChanges(of: state, changed: \.changed, with: blocking) { "\($0.value)\n" }
                }
            }
        }
        #expect(records.entries.isEmpty, "\(records.entries.map(\.message))")
        guard case .success(let text) = readTextFile(path, limit: 1 << 10) else {
            Issue.record("not saved")
            return
        }
        #expect(text == "16\n")
        #expect(state.withLock { $0.changed } == false)
    }
}
