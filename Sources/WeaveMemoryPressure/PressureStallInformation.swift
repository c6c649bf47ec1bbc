/// One line of a PSI file: averages of the share of time stalled (percent) and the total (µs).
public struct PressureAverages: Sendable, Equatable {
    public let avg10: Double
    public let avg60: Double
    public let avg300: Double
    /// Total stall time in microseconds.
    public let total: UInt64
}

/// A reading of a Linux pressure-stall-information file such as `/proc/pressure/memory`.
public struct PressureStallInformation: Sendable, Equatable {
    /// Some task was stalled.
    public let some: PressureAverages
    /// All non-idle tasks were stalled (absent from the `cpu` file on older kernels).
    public let full: PressureAverages?

    /// Parses PSI text; anything malformed is an error naming the line, never a crash.
    public static func parse(_ text: String) throws(PSIParseError) -> PressureStallInformation {
        var some: PressureAverages?
        var full: PressureAverages?
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let fields = line.split(separator: " ")
            guard let kind = fields.first, kind == "some" || kind == "full" else {
                throw PSIParseError(line: number + 1, message: "expected a line starting with 'some' or 'full', got '\(line)'")
            }
            var values: [Substring: Substring] = [:]
            for field in fields.dropFirst() {
                let pair = field.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else {
                    throw PSIParseError(line: number + 1, message: "expected key=value, got '\(field)'")
                }
                values[pair[0]] = pair[1]
            }
            guard let avg10 = values["avg10"].flatMap({ Double($0) }), let avg60 = values["avg60"].flatMap({ Double($0) }),
                  let avg300 = values["avg300"].flatMap({ Double($0) }), let total = values["total"].flatMap({ UInt64($0) }),
                  [avg10, avg60, avg300].allSatisfy({ $0 >= 0 && $0 <= 100 }) else {
                throw PSIParseError(line: number + 1, message: "expected avg10, avg60, avg300 (0-100) and total, got '\(line)'")
            }
            let averages = PressureAverages(avg10: avg10, avg60: avg60, avg300: avg300, total: total)
            if kind == "some" { some = averages } else { full = averages }
        }
        guard let some else { throw PSIParseError(line: 0, message: "no 'some' line") }
        return PressureStallInformation(some: some, full: full)
    }
}

/// Why PSI text could not be read.
public struct PSIParseError: Error, Equatable, CustomStringConvertible {
    /// The 1-based line, or 0 when the problem is the file as a whole.
    public let line: Int
    public let message: String

    public var description: String { line > 0 ? "PSI line \(line): \(message)" : "PSI: \(message)" }
}
