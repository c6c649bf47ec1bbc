import Testing
import WeaveHealth
@testable import WeaveHealthd
import WeaveObservability
import WeaveSupport

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

    /// A component name with a control character (C0, DEL, C1) is refused, by the one rule every
    /// shown text follows (`isControl`); an invisible one (a bidi override) is kept, and escaped
    /// where it is shown.
    @Test func aComponentNameWithAControlCharacterIsRefused() throws {
        for name in ["a\\u001bb", "a\\u0085b", "a\\u2028b"] {
            let body = "{\"status\":\"pass\",\"checks\":{\"\(name):status\":[{\"status\":\"pass\"}]}}"
            #expect(throws: FetchFailure.self, "\(name)") { try AppHealth(Array(body.utf8), status: 200) }
        }
        let bidi = "{\"status\":\"pass\",\"checks\":{\"a\\u202eb:status\":[{\"status\":\"pass\"}]}}"
        #expect(try AppHealth(Array(bidi.utf8), status: 200).components.map(\.name) == ["a\u{202E}b"])
    }

    /// At most 1,000 components of one application are kept.
    @Test func componentsAreCapped() throws {
        let health = try AppHealth(Self.document(components: 1_500, output: "x"), status: 503)
        #expect(health.components.count == AppFleet.maxComponents)
    }

    /// When a component's state began is the application's own time (`changedAt`), read exactly;
    /// one that is missing or not a UTC RFC 3339 time is no time (the daemon then uses its read's).
    @Test func theApplicationsOwnTimeOfATransitionIsKept() throws {
        let body = #"{"status":"warn","checks":{"a:status":[{"status":"warn","output":"slow","changedAt":"2026-11-28T09:31:17.204Z"}],"#
            + #""b:status":[{"status":"pass","changedAt":"yesterday"}],"c:status":[{"status":"pass","changedAt":"2026-11-28T09:31:17.2040000000000000001Z"}],"#
            + #""d:status":[{"status":"pass"}]}}"#
        let health = try AppHealth(Array(body.utf8), status: 200)
        let times = Dictionary(uniqueKeysWithValues: health.components.map { ($0.name, $0.changedAt) })
        #expect(times["a"] == 1_795_858_277.204)
        #expect(times["b"] == .some(nil) && times["c"] == .some(nil) && times["d"] == .some(nil))
    }

    @Test func rfc3339TimesRoundTripAndNothingElseIsATime() {
        for seconds in [0.0, 1_795_858_277.204, 1_795_858_277.0, 4_102_444_799.999] {
            #expect(Timestamp.seconds(rfc3339: Timestamp.rfc3339(seconds)).map { ($0 * 1000).rounded() } == (seconds * 1000).rounded())
        }
        #expect(Timestamp.seconds(rfc3339: "2026-11-28T09:31:17Z") == 1_795_858_277)
        for hostile in ["", "2026-11-28", "2026-11-28T09:31:17", "2026-11-28T09:31:17+01:00", "2026-13-28T09:31:17Z",
                        "2026-11-28T24:00:00Z", "2026-11-28T09:31:17.Z", "-026-11-28T09:31:17Z", "2026-11-28T09:31:17.1234567890Z",
                        "２０２６-11-28T09:31:17Z", "2026-11-28T09:31:17.999999999999999999999999999Z", "2026/11/28T09:31:17Z"] {
            #expect(Timestamp.seconds(rfc3339: hostile) == nil, "\(hostile)")
        }
    }
}
