import WeaveSupport

/// Whether the process runs as a test, which selects `InjectedKey.testValue`.
public enum ExecutionContext: Sendable {
    case live
    case test

    /// `WEAVEDI_CONTEXT` (`test` or `live`) if set; otherwise `.test` inside an XCTest or Swift Testing
    /// runner (`swift test`), else `.live`. Read once per process.
    public static let current: ExecutionContext = detect(
        environment: { getenv($0).map { String(cString: $0) } },
        executable: executablePath())

    static func detect(environment: (String) -> String?, executable: String) -> ExecutionContext {
        switch environment("WEAVEDI_CONTEXT")?.lowercased() {
        case "test": return .test
        case "live": return .live
        default: break
        }
        if environment("XCTestConfigurationFilePath") != nil || environment("XCTestSessionIdentifier") != nil {
            return .test
        }
        if executable.hasSuffix(".xctest") || executable.hasSuffix("swiftpm-testing-helper") {
            return .test
        }
        return .live
    }

    private static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return CommandLine.arguments.first ?? "" }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
