import Foundation

/// The check types as their source files declare them, to test `CheckTypes.all` against rather than
/// a list kept by hand: each `type:` name (`static let typeName = "…"`), by file, and whether that
/// file gives the type metric families (`: CheckMetrics`).
enum CheckTypeSources {
    struct Declared: Hashable {
        let typeName: String
        let hasMetrics: Bool
        /// The file's path under Sources/WeaveHealthd.
        let file: String
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/WeaveHealthd").standardized

    /// Every check type declared anywhere in the daemon's sources.
    static func declared() throws -> [Declared] {
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        return try files.sorted().flatMap { file -> [Declared] in
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            let names = text.matches(of: /static let typeName = "([a-z_]+)"/).map { String($0.1) }
            return names.map { Declared(typeName: $0, hasMetrics: text.contains(": CheckMetrics"), file: file) }
        }
    }
}
