/// One item of Nagios perfdata (`'label'=value[UOM];[warn];[crit];[min];[max]`), its value in the
/// base unit of its kind.
struct Perfdata: Equatable {
    /// What a unit of measure becomes: each kind is a metric family of its own, since Prometheus
    /// names carry their unit (`weave_check_perfdata_seconds`, …).
    enum Kind: CaseIterable {
        case seconds, bytes, ratio, counter, plain
    }

    var label: String
    var value: Double
    var kind: Kind

    /// Every well-formed item of `text`; a malformed one is skipped, never guessed at.
    static func parse(_ text: String) -> [Perfdata] {
        var items: [Perfdata] = []
        var rest = Substring(text)
        while true {
            rest = rest.drop { $0 == " " }
            guard !rest.isEmpty else { break }
            var label: Substring
            if rest.first == "'" {
                let afterQuote = rest.dropFirst()
                guard let close = afterQuote.firstIndex(of: "'") else { break }
                label = afterQuote[..<close]
                rest = afterQuote[afterQuote.index(after: close)...]
                guard rest.first == "=" else { break }
                rest = rest.dropFirst()
            } else {
                let token = rest[..<(rest.firstIndex(of: " ") ?? rest.endIndex)]
                guard let equals = token.firstIndex(of: "=") else {
                    rest = rest[token.endIndex...] // not label=value: skip the word
                    continue
                }
                label = token[..<equals]
                rest = rest[rest.index(after: equals)...]
            }
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            let field = rest[..<end].split(separator: ";", omittingEmptySubsequences: false).first ?? ""
            rest = rest[end...]
            if let (value, kind) = parseValue(String(field)) { items.append(Perfdata(label: String(label), value: value, kind: kind)) }
        }
        return items
    }

    /// `12.5ms` → 0.0125 s, `3GB` → 3e9 bytes, `80%` → 0.8, `5c` → a counter; no unit stays as it is.
    static func parseValue(_ text: String) -> (Double, Kind)? {
        let numberEnd = text.firstIndex { !("0123456789.-+eE".contains($0)) } ?? text.endIndex
        guard let number = Double(text[..<numberEnd]), number.isFinite else { return nil }
        switch text[numberEnd...] {
        case "": return (number, .plain)
        case "c": return (number, .counter)
        case "s": return (number, .seconds)
        case "ms": return (number / 1e3, .seconds)
        case "us": return (number / 1e6, .seconds)
        case "%": return (number / 100, .ratio)
        case "B": return (number, .bytes)
        case "KB": return (number * 1e3, .bytes)
        case "MB": return (number * 1e6, .bytes)
        case "GB": return (number * 1e9, .bytes)
        case "TB": return (number * 1e12, .bytes)
        default: return nil
        }
    }
}
