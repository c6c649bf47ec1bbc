import WeaveSupport

/// Output of a Nagios plugin: the first line's text is the reason; what follows `|` is perfdata,
/// `'label'=value[UOM];[warn];[crit];[min];[max]`, values converted to base units where the unit allows.
struct NagiosOutput: Equatable {
    var text: String
    var perfdata: [(label: String, value: Double)]

    static func == (lhs: NagiosOutput, rhs: NagiosOutput) -> Bool {
        lhs.text == rhs.text && lhs.perfdata.map(\.label) == rhs.perfdata.map(\.label) && lhs.perfdata.map(\.value) == rhs.perfdata.map(\.value)
    }

    init(_ output: String) {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines.first.map(String.init) ?? ""
        var perf = ""
        if let bar = first.firstIndex(of: "|") {
            text = String(first[..<bar]).trimmingWhitespace()
            perf = String(first[first.index(after: bar)...])
        } else {
            text = first.trimmingWhitespace()
        }
        // Long output may carry more perfdata after a `|` on a later line.
        for line in lines.dropFirst() {
            if let bar = line.firstIndex(of: "|") { perf += " " + line[line.index(after: bar)...] }
        }
        perfdata = NagiosOutput.parsePerfdata(perf)
    }

    static func parsePerfdata(_ text: String) -> [(label: String, value: Double)] {
        var items: [(String, Double)] = []
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
            if let value = parseValue(String(field)) { items.append((String(label), value)) }
        }
        return items
    }

    /// `12.5ms` → 0.0125, `3GB` → 3e9, `80%` → 0.8; `c` and no unit stay as they are.
    static func parseValue(_ text: String) -> Double? {
        let numberEnd = text.firstIndex { !("0123456789.-+eE".contains($0)) } ?? text.endIndex
        guard let number = Double(text[..<numberEnd]), number.isFinite else { return nil }
        switch text[numberEnd...] {
        case "", "c": return number
        case "s": return number
        case "ms": return number / 1e3
        case "us": return number / 1e6
        case "%": return number / 100
        case "B": return number
        case "KB": return number * 1e3
        case "MB": return number * 1e6
        case "GB": return number * 1e9
        case "TB": return number * 1e12
        default: return nil
        }
    }
}
