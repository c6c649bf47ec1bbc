import WeaveSupport

/// Output of a Nagios plugin: the first line's text is the reason; what follows `|` is perfdata,
/// `'label'=value[UOM];[warn];[crit];[min];[max]` (see `Perfdata`).
struct NagiosOutput: Equatable {
    var text: String
    var perfdata: [Perfdata]

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
        perfdata = Perfdata.parse(perf)
    }
}
