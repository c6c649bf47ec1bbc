import Testing
@testable import WeaveHealthServer
import WeaveSupport

@Suite struct ConnectionLimiterTests {
    /// Connections that send nothing (or trickle) cannot keep a client that asks at once out: a
    /// crowded server closes the connection idle longest, once it has been idle for the grace, and
    /// admits the newcomer in full; one answering a request, or idle for less, is never closed.
    @Test func aCrowdedServerMakesRoomByClosingTheLongestIdle() {
        let limiter = ConnectionLimiter(maximum: 4, reserved: 1)
        // (Entries 0-2 open; 0 busy. At 3 open the newcomer would be in the reserve.)
        let closed = Locked<[Int]>([])
        func entry(_ number: Int) -> ConnectionLimiter.Entry {
            ConnectionLimiter.Entry { closed.withLock { $0.append(number) } }
        }
        let entries = (0..<3).map(entry)
        for entry in entries { #expect(limiter.admit(entry) == .full) }
        entries[0].mark(busy: true) // answering: never closed
        let later = ContinuousClock.now + .seconds(1)
        // Three open of four, one in reserve: the newcomer would land in it, so the longest idle goes.
        #expect(limiter.admit(entry(3), now: later) == .full)
        #expect(closed.withLock { $0 } == [1])
        #expect(limiter.count == 3)
        // Within the grace nobody is closed: the newcomer gets the reserve, then nothing.
        #expect(limiter.admit(entry(4)) == .probesOnly)
        #expect(limiter.admit(entry(5)) == .refused)
        #expect(closed.withLock { $0 } == [1])
        // A released entry that was closed to make room is not counted twice.
        limiter.release(entries[1])
        #expect(limiter.count == 4)
    }

    /// One process cannot take every slot from another: a newcomer from a process holding fewer
    /// connections closes an idle one of the process holding the most, however recent; a newcomer
    /// of that process itself gets the reserve, as before.
    @Test func aProcessHoldingTheMostConnectionsMakesRoomForAnother() {
        let limiter = ConnectionLimiter(maximum: 4, reserved: 1)
        let closed = Locked<[Int]>([])
        func entry(_ number: Int, peer: Int32) -> ConnectionLimiter.Entry {
            ConnectionLimiter.Entry(peer: peer) { closed.withLock { $0.append(number) } }
        }
        for number in 0..<3 { #expect(limiter.admit(entry(number, peer: 100)) == .full) }
        #expect(limiter.admit(entry(3, peer: 100)) == .probesOnly, "the crowding process itself: the reserve")
        #expect(closed.withLock { $0 }.isEmpty)
        #expect(limiter.admit(entry(4, peer: 200)) == .full, "another process: served in full")
        #expect(closed.withLock { $0.count } == 2, "two of process 100's idle connections closed: \(closed.withLock { $0 })")
        #expect(limiter.count == 3)
    }

    /// Busy connections cannot be closed: another user's processes asking back to back on every
    /// slot used to push weave-healthd's connection into the reserve, where /metrics is 503. A user
    /// holding fewer than `lightUser` connections is served in full, even in the reserve (the daemon
    /// asks /metrics and /health at once); the crowding user gets the reserve as before.
    @Test func aLightUserIsServedInFullWhenBusyPeersOfAnotherFillTheRest() {
        let limiter = ConnectionLimiter(maximum: 4, reserved: 1)
        func entry(peer: Int32, user: UInt32) -> ConnectionLimiter.Entry {
            ConnectionLimiter.Entry(peer: peer, user: user) {}
        }
        for pid in Int32(1)...3 {
            let busy = entry(peer: pid, user: 1_000)
            #expect(limiter.admit(busy) == .full)
            busy.mark(busy: true)
        }
        #expect(limiter.admit(entry(peer: 9, user: 0)) == .full, "the daemon's user, holding none: in full")
        #expect(limiter.admit(entry(peer: 4, user: 1_000)) == .refused, "all four taken")
        let crowded = ConnectionLimiter(maximum: 8, reserved: 5)
        for pid in Int32(1)...3 {
            let busy = entry(peer: pid, user: 1_000)
            #expect(crowded.admit(busy) == .full)
            busy.mark(busy: true)
        }
        #expect(crowded.admit(entry(peer: 4, user: 1_000)) == .probesOnly, "the crowding user: the reserve")
        for number in 1...ConnectionLimiter.lightUser {
            #expect(crowded.admit(entry(peer: 9, user: 0)) == .full, "another user's connection \(number): in full")
        }
        #expect(crowded.admit(entry(peer: 9, user: 0)) == .probesOnly, "past lightUser: the reserve")
    }
}
