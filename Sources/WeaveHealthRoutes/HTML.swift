import WeaveSupport

/// Text made safe for HTML, in element content and in quoted attribute values, and the headers that
/// keep a page inert whatever it holds.
public enum HTML {
    /// `text` with `& < > " '` as character references, and every control, bidirectional-override
    /// and other invisible formatting character shown as its code (`\u{202E}`), so another process's
    /// string neither opens markup nor reorders or hides what a person reads. (A numeric reference
    /// would not do: `&#x202E;` is the override itself once the browser has read it.)
    ///
    /// It works on Unicode scalars, not on `Character`s: a grapheme cluster such as U+0600 followed
    /// by `<` is one `Character` that is not `"<"`, and a check per `Character` let the `<` through.
    public static func escape(_ text: String) -> String {
        // Most names and reasons hold nothing to escape: returned as they are, without a copy.
        guard text.unicodeScalars.contains(where: needsReference) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case _ where needsReference(scalar): out += scalar.escapedForDisplay
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The headers every HTML answer carries: no script at all, no asset from elsewhere, no framing,
    /// no form posted elsewhere, and no guessing of the type. Styles may be inline (the pages have
    /// their CSS in a `<style>` element and in `style=` attributes).
    public static let headers: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; form-action 'self'; "
            + "base-uri 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ]

    /// Whether `scalar` is written otherwise: the five markup characters, and every scalar that
    /// `isControlOrInvisible` but tab and newline, which stay.
    private static func needsReference(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x26, 0x3C, 0x3E, 0x22, 0x27: return true
        case 0x09, 0x0A: return false
        default: return scalar.isControlOrInvisible
        }
    }
}
