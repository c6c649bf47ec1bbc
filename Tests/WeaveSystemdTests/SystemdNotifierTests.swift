#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import WeaveSystemd

@Suite(.serialized) struct SystemdNotifierTests {
    @Test func outsideSystemdEverythingIsANoOp() {
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        let notifier = SystemdNotifier()
        #expect(!notifier.isActive)
        #expect(notifier.watchdogInterval == nil)
        notifier.ready(status: "1 check")
        notifier.watchdog()
        notifier.stopping()
    }

    @Test func watchdogIntervalComesFromTheEnvironment() {
        setenv("WATCHDOG_USEC", "400000", 1)
        defer { unsetenv("WATCHDOG_USEC") }
        #expect(SystemdNotifier().watchdogInterval == .milliseconds(400))
        setenv("WATCHDOG_PID", "1", 1) // another process's watchdog
        defer { unsetenv("WATCHDOG_PID") }
        #expect(SystemdNotifier().watchdogInterval == nil)
    }

    @Test func noSocketsWithoutActivation() {
        unsetenv("LISTEN_FDS")
        #expect(SocketActivation.sockets().isEmpty)
    }

    @Test func journalStreamMustMatchStandardError() {
        setenv("JOURNAL_STREAM", "1:2", 1)
        defer { unsetenv("JOURNAL_STREAM") }
        #expect(!Journal.standardErrorIsJournal)
        var status = stat()
        #expect(fstat(2, &status) == 0)
        setenv("JOURNAL_STREAM", "\(status.st_dev):\(status.st_ino)", 1)
        #expect(Journal.standardErrorIsJournal)
    }
}
