import Testing
@testable import weave_healthd

@Suite struct AppHealthTests {
    static func document(components: Int, output: String, status: String = "fail") -> [UInt8] {
        let checks = (0..<components).map { "\"c\($0):status\":[{\"status\":\"\(status)\",\"output\":\"\(output)\"}]" }
        return Array("{\"status\":\"\(status)\",\"checks\":{\(checks.joined(separator: ","))}}".utf8)
    }

    /// A component's reason is kept up to 1 KiB, cut at a character, with "…"; what the components
    /// keep is counted, so a round can bound it across applications.
    @Test func reasonsAreCutAndWhatIsKeptIsCounted() throws {
        let long = String(repeating: "é", count: 3_000) // 6,000 bytes
        let health = try AppHealth(Self.document(components: 3, output: long), status: 503)
        for component in health.components {
            let reason = try #require(component.status.reason)
            #expect(reason.utf8.count <= AppHealth.maxOutputBytes && reason.hasSuffix("…") && reason.hasPrefix("éé"))
        }
        #expect(health.keptBytes == health.components.reduce(0) { $0 + $1.name.utf8.count + $1.status.reason!.utf8.count })
        #expect(health.keptBytes < 3 * (AppHealth.maxOutputBytes + 8))
        let short = try AppHealth(Self.document(components: 1, output: "disk 3% free", status: "warn"), status: 200)
        #expect(short.components.first?.status.reason == "disk 3% free")
    }

    /// At most 1,000 components of one application are kept.
    @Test func componentsAreCapped() throws {
        let health = try AppHealth(Self.document(components: 1_500, output: "x"), status: 503)
        #expect(health.components.count == AppFleet.maxComponents)
    }
}
