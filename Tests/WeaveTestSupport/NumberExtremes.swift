/// Finite numbers out of the range of what a reader makes of them: a time of `1e300`, a count of
/// 2^63, `-0`, `1e-300`, the largest double, a date past 9999 or before 1970. A reader refuses them
/// or bounds them; none may trap in a conversion (`Int(1e300)` does).
public let numberExtremes = [
    "1e300", "-1e300", "1e-300", "-1e-300", "-0", "0", "4.9e-324", "1.7976931348623157e308", "-1.7976931348623157e308",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "9007199254740993",
    "253402300800", "-1", "0.5",
]

/// `document` (JSON) again once for each of its numbers and each of `numberExtremes`, with that one
/// number replaced: every numeric field of an answer, attacked in turn.
public func numberVariants(of document: String) -> [(field: Int, extreme: String, text: String)] {
    var numbers: [Range<String.Index>] = []
    var index = document.startIndex
    var inString = false
    while index < document.endIndex {
        let character = document[index]
        if inString {
            if character == "\\" { index = document.index(after: index) } else if character == "\"" { inString = false }
            index = document.index(after: index)
        } else if character == "\"" {
            inString = true
            index = document.index(after: index)
        } else if character == "-" || character.isASCII && character.isNumber {
            let start = index
            while index < document.endIndex, "+-.eE0123456789".contains(document[index]) { index = document.index(after: index) }
            numbers.append(start..<index)
        } else {
            index = document.index(after: index)
        }
    }
    return numbers.enumerated().flatMap { field, range in
        numberExtremes.map { (field, $0, String(document[..<range.lowerBound]) + $0 + document[range.upperBound...]) }
    }
}
