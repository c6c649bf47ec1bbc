/// The one text-safety rule of what other processes send, wherever it is shown: the daemon's log
/// lines (journal and stderr), the status page's text, the probe's output (`top`, `--nagios`).
extension Unicode.Scalar {
    /// Whether it is a control character (C0, DEL, C1: escape sequences and line breaks) or the
    /// line or paragraph separator: what breaks a line, or drives a terminal.
    package var isControl: Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Whether it `isControl`, or is an invisible formatting character (general category Cf:
    /// bidirectional embeddings, overrides and isolates, zero-width joiners, U+0600's prepended
    /// marks): what must not reach a page, a log line or a terminal as it is.
    package var isControlOrInvisible: Bool {
        switch value {
        case 0x20...0x7E: return false
        default: return isControl || properties.generalCategory == .format
        }
    }

    /// `\u{202E}`: how such a scalar is written instead.
    package var escapedForDisplay: String {
        "\\u{" + String(value, radix: 16, uppercase: true) + "}"
    }
}

extension String {
    /// Safe in one log line and on the terminal that shows it: every scalar `isControlOrInvisible`
    /// is written `escapedForDisplay`. For what another process sends that the daemon logs.
    package var logSafe: String {
        guard unicodeScalars.contains(where: \.isControlOrInvisible) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            if scalar.isControlOrInvisible { result += scalar.escapedForDisplay } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}
