/// A JSON value, parsed without Foundation (the probe stays lean): the probe reads `/health` with
/// it, and the daemon an application's.
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
        default: return false
        }
    }

    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    package var string: String? { if case .string(let value) = self { value } else { nil } }
    package var number: Double? { if case .number(let value) = self { value } else { nil } }
    /// A number that is a date a calendar shows (`Timestamp.dates`, in seconds since the epoch); nil
    /// for anything else, `1e300` included, which no reader may take for a time.
    package var epochSeconds: Double? { number.flatMap { Timestamp.dates.contains($0) ? $0 : nil } }

    /// Parses a whole document; nil if it is not valid JSON.
    package static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = Parser(bytes: bytes)
        guard let value = parser.value() else { return nil }
        parser.skipSpace()
        return parser.index == bytes.count ? value : nil
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var depth = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func literal(_ text: String, _ value: JSONValue) -> JSONValue? {
            let expected = Array(text.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else { return nil }
            index += expected.count
            return value
        }

        mutating func value() -> JSONValue? {
            skipSpace()
            guard index < bytes.count, depth < 64 else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "["):
                index += 1; depth += 1; defer { depth -= 1 }
                var items: [JSONValue] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                while true {
                    guard let item = value() else { return nil }
                    items.append(item)
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                    return nil
                }
            case UInt8(ascii: "{"):
                index += 1; depth += 1; defer { depth -= 1 }
                var members: [(String, JSONValue)] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    guard let member = value() else { return nil }
                    members.append((key, member))
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                    return nil
                }
            default:
                return number()
            }
        }

        mutating func number() -> JSONValue? {
            let start = index
            while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
            guard index > start, let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else { return nil }
            return .number(value)
        }

        mutating func string() -> String? {
            index += 1 // the opening quote
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() { scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars); run = [] }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                        else { return nil }
                        index += 4
                        scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(Unicode.Scalar(escape))
                    default: return nil
                    }
                default:
                    guard byte >= 0x20 else { return nil }
                    run.append(byte)
                }
            }
            return nil
        }
    }
}
