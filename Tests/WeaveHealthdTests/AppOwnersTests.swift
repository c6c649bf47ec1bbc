import Glibc
import Testing
@testable import WeaveHealthd
import WeavePrometheus
import WeaveSupport
import WeaveTestSupport

/// The name bindings (round 4): kept across a restart, never forgotten for another user's benefit,
/// and every refusal said.
@Suite struct AppOwnersTests {
    private func refused(_ owners: AppOwners) -> [String: Double] {
        Dictionary(uniqueKeysWithValues: owners.family().samples.map { ($0.labels[0].1, $0.value) })
    }

    /// A restarted daemon (an upgrade) knows who owns each name: the name of a stopped
    /// application is not vacant for another user meanwhile. A file that is not one is said.
    @Test func bindingsAreKeptAcrossARestart() async throws {
        let path = "/tmp/weave-owners-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
        defer { unlink(path) }
        let before = AppOwners(file: StateFile(path: path, what: AppOwners.what))
        #expect(refused(before) == ["owner": 0, "link": 0, "full": 0], "each reason from 0")
        #expect(before.admit("orders", uid: 1_001, linkOwner: 1_001, path: "/run/weave/apps/orders.sock", present: ["orders"]))
        await before.persist(with: BlockingCalls())
        let records = LogRecords()
        let after = AppOwners(file: StateFile(path: path, what: AppOwners.what), logger: records.logger)
        #expect(!after.admit("orders", uid: 1_002, linkOwner: 1_002, path: "/run/weave/apps/orders.sock", present: ["orders"]))
        #expect(refused(after)["owner"] == 1 && records.count(WeaveEvent.appRefused.messageID) == 1)
        #expect(after.admit("orders", uid: 1_001, linkOwner: 1_001, path: "/run/weave/apps/orders.sock", present: ["orders"]))

        for broken in [#"{"owners":[{"app":"../x","uid":1}]}"#, #"{"owners":[{"app":"a","uid":-1}]}"#, #"{"owners":"#] {
            let handle = fopen(path, "w")!
            fputs(broken, handle)
            fclose(handle)
            let records = LogRecords()
            _ = AppOwners(file: StateFile(path: path, what: AppOwners.what, logger: records.logger))
            #expect(records.entries.count == 1 && records.entries[0].message.contains("Cannot read"), "\(broken)")
        }
    }

    /// Another user making thousands of sockets (stale at once) cannot push a stopped
    /// application's binding out: it fills its own share, has only its own gone names forgotten,
    /// and a claim past its share is refused, logged and counted.
    @Test func aBindingIsNeverForgottenForAnotherUser() {
        let records = LogRecords()
        let owners = AppOwners(logger: records.logger)
        #expect(owners.admit("orders", uid: 1_001, linkOwner: 1_001, path: "/s/orders.sock", present: ["orders"]))
        let names = (0..<AppOwners.maxNamesPerUser).map { "flood-\($0)" }
        let present = Set(names)
        #expect(names.allSatisfy { owners.admit($0, uid: 2_000, linkOwner: 2_000, path: "/s/\($0).sock", present: present) })
        // All of its names present: no room, refused and said.
        #expect(!owners.admit("one-more", uid: 2_000, linkOwner: 2_000, path: "/s/one-more.sock", present: Set(names + ["one-more"])))
        #expect(refused(owners)["full"] == 1 && records.entries.last?.message.contains("has bound \(AppOwners.maxNamesPerUser) application names") == true)
        // Its own names gone (and orders' socket gone too): its own are forgotten, orders' is not.
        #expect(owners.admit("one-more", uid: 2_000, linkOwner: 2_000, path: "/s/one-more.sock", present: ["one-more"]))
        #expect(!owners.admit("orders", uid: 2_000, linkOwner: 2_000, path: "/s/orders.sock", present: ["orders", "one-more"]))
        #expect(refused(owners)["owner"] == 1)
    }
}
