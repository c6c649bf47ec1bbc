#if canImport(Glibc)
import Glibc
#endif
import Testing
import WeaveSupport
import WeaveTestSupport
@testable import WeaveHealthd

/// Mutations of the README's example configuration: each either loads or is rejected with a
/// positioned error, never a crash, a trap or a hang. A fixed seed in CI; `WEAVE_FUZZ_CASES` and
/// `WEAVE_FUZZ_SEED` run longer or other campaigns on demand.
@Suite struct ConfigurationFuzzTests {
    static let bytes = Array("[]{}:-#\"'|>\t&\n 09.ex\0\u{7F}".utf8) + [0xFF, 0xC3]
    static let tokens = ["1e400", "99999999999999999999", "-1", "1e10s", "9999999999h", "0", "\0", "[", "]", "{", "}", ": ",
                         "\n  ", "\n- ", "#", "\"", "'", "|", ">", "&a", "*a", "!t", "---", "µs", "nan", "inf", "0x10", "\t"]

    @Test func mutatedExamplesLoadOrFailWithAPosition() async throws {
        let readme = #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/README.md"
        let text = try #require(readTextFile("/" + readme))
        let start = try #require(text.firstRange(of: "```yaml\nlisten:"))
        let end = try #require(text[start.upperBound...].firstRange(of: "```"))
        let example = Array(text[text.index(start.lowerBound, offsetBy: 8)..<end.lowerBound].utf8)
        #expect(throws: Never.self) { try ConfigurationLoader(file: "example.yaml", text: String(decoding: example, as: UTF8.self)).parse() }

        let cases = getenv("WEAVE_FUZZ_CASES").flatMap { Int(String(cString: $0)) } ?? 10_000
        let seed = getenv("WEAVE_FUZZ_SEED").flatMap { UInt64(String(cString: $0)) } ?? 0x5EED
        // Seconds in a debug build: on a thread of its own, and what went wrong comes back as text.
        let (loaded, rejected, failures) = await onThreadOfItsOwn { Self.attempt(cases, mutating: example, seed: seed) }
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        #expect(loaded + rejected == cases && loaded > 0 && rejected > 0)
    }

    /// Loads `cases` mutations of `example`: how many loaded, how many were rejected, and the
    /// rejections without a position or a message.
    static func attempt(_ cases: Int, mutating example: [UInt8], seed: UInt64) -> (loaded: Int, rejected: Int, failures: [String]) {
        var random = SplitMix64(seed: seed)
        var (loaded, rejected, failures) = (0, 0, [String]())
        for _ in 0..<cases {
            var bytes = example
            for _ in 0...Int(random.next() % 4) { mutate(&bytes, &random) }
            do throws(ConfigurationError) {
                _ = try ConfigurationLoader(file: "fuzz.yaml", text: String(decoding: bytes, as: UTF8.self)).parse()
                loaded += 1
            } catch {
                if !(error.line >= 1 && error.column >= 1 && !error.message.isEmpty) { failures.append("\(error)") }
                rejected += 1
            }
        }
        return (loaded, rejected, failures)
    }

    private static func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        guard !bytes.isEmpty else { return }
        let at = Int(random.next() % UInt64(bytes.count))
        let length = min(Int(random.next() % 16) + 1, bytes.count - at)
        switch random.next() % 4 {
        case 0: bytes[at] = Self.bytes[Int(random.next() % UInt64(Self.bytes.count))]
        case 1: bytes.removeSubrange(at..<at + length)
        case 2: bytes.insert(contentsOf: bytes[at..<at + length], at: at)
        default: bytes.insert(contentsOf: Array(Self.tokens[Int(random.next() % UInt64(Self.tokens.count))].utf8), at: at)
        }
    }
}

/// A seeded generator (SplitMix64), so a failing case can be reproduced from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
