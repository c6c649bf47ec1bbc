/// A configuration problem, located as `file:line:column: message` (what editors and CI parse).
struct ConfigurationError: Error, CustomStringConvertible {
    let file: String
    let line: Int
    let column: Int
    let message: String

    var description: String { "\(file):\(line):\(column): \(message)" }
}
