/// journald's rules for field names: upper-case ASCII letters, digits and `_`, at most 64
/// characters, not starting with `_` (trusted fields) or a digit.
public enum JournalFieldName {
    /// The longest name journald accepts.
    public static let maximumLength = 64

    /// Whether `name` is a field name journald accepts from a client.
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumLength, !isDigit(first), first != UInt8(ascii: "_") else {
            return false
        }
        return bytes.allSatisfy { isUpper($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// A valid field name for the metadata key `key`: upper-cased, every other character turned
    /// into `_`, runs of `_` collapsed, then `prefix` put in front unless the name already has it,
    /// and the whole cut to 64 characters. `prefix` must itself be a valid name (for example
    /// `WEAVE_`), so the result can never be a trusted `_` field or one of journald's own (`UNIT`,
    /// `MESSAGE`, …). An empty or all-invalid key becomes `<prefix>FIELD`.
    public static func sanitized(_ key: String, prefix: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count)
        for byte in key.utf8 {
            let mapped: UInt8
            if isUpper(byte) || isDigit(byte) { mapped = byte }
            else if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") { mapped = byte - 32 }
            else { mapped = UInt8(ascii: "_") }
            if mapped == UInt8(ascii: "_") && (bytes.last == UInt8(ascii: "_") || bytes.isEmpty) { continue }
            bytes.append(mapped)
        }
        while bytes.last == UInt8(ascii: "_") { bytes.removeLast() }
        var name = bytes.isEmpty ? "FIELD" : String(decoding: bytes, as: UTF8.self)
        if !name.hasPrefix(prefix) { name = prefix + name }
        return String(name.utf8.prefix(maximumLength))!
    }

    private static func isUpper(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
