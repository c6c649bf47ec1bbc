extension String {
    /// Safe in one log line and on the terminal that shows it: control characters (C0, DEL, C1, so
    /// escape sequences and line breaks), the invisible formatting characters (general category Cf:
    /// bidirectional overrides and isolates, zero-width joiners) and the line and paragraph
    /// separators become `\u{XX}`. For what another process sends that the daemon logs.
    package var logSafe: String {
        func unsafe(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
            case 0x20...0x7E: return false
            default: return scalar.properties.generalCategory == .format
            }
        }
        guard unicodeScalars.contains(where: unsafe) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            if unsafe(scalar) { result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}" } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}
