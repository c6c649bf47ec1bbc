/// Reads the part of YAML 1.2 a configuration file uses, without Foundation (the daemon stays small):
/// block mappings and sequences, flow `[…]` and `{…}`, plain, single- and double-quoted scalars,
/// literal `|` and folded `>` block scalars, comments, and one document with an optional `---`.
/// Anchors, aliases, tags, `?` keys, directives and multi-line quoted or plain scalars are rejected
/// with their position rather than misread. The daemon's configuration is read with it, and the
/// probe reads the daemon's `listen:` with it.
package struct YAMLReader {
    private let lines: [[UInt8]]
    /// For each line with non-ASCII bytes, the character column of every byte index (and one past
    /// the end); ASCII lines need none. Positions are asked for every node, so counting from the
    /// start of the line each time would make a long line quadratic.
    private let characterColumns: [Int: [Int32]]
    private var row = 0
    private var depth = 0
    private static let maximumDepth = 64

    private init(_ text: String) {
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : Array(line)
        }
        var columns: [Int: [Int32]] = [:]
        for (row, line) in lines.enumerated() where line.contains(where: { $0 >= 0x80 }) {
            var table: [Int32] = []
            table.reserveCapacity(line.count + 1)
            var column: Int32 = 1
            for byte in line {
                table.append(column)
                if byte & 0xC0 != 0x80 { column += 1 }
            }
            table.append(column)
            columns[row] = table
        }
        characterColumns = columns
    }

    /// The document's root node, or nil when it holds nothing but comments and blank lines.
    package static func parse(_ text: String) throws(YAMLSyntaxError) -> YAMLNode? {
        var reader = YAMLReader(text)
        return try reader.document()
    }

    private mutating func document() throws(YAMLSyntaxError) -> YAMLNode? {
        try skipBlank()
        if row < lines.count, isMarker("---") {
            row += 1
            try skipBlank()
        }
        var root: YAMLNode?
        if row < lines.count, !isMarker("...") {
            guard let indent = try indentation(of: row) else { return nil }
            root = try node(at: indent, parentIndent: -1, afterKey: false)
            try skipBlank()
        }
        if row < lines.count, isMarker("...") {
            row += 1
            try skipBlank()
        }
        if row < lines.count {
            let indent = try indentation(of: row) ?? 0
            if isMarker("---") { throw error(row, 0, "only one YAML document is allowed in a file") }
            throw error(row, indent, "unexpected content here; check the indentation")
        }
        return root
    }

    // MARK: Block structure

    /// The node whose text starts at `column` of the current line; lines that belong to it must be
    /// indented more than `parentIndent`. After a key on the same line (`afterKey`), only a scalar,
    /// a flow collection or a block scalar may follow.
    private mutating func node(at column: Int, parentIndent: Int, afterKey: Bool) throws(YAMLSyntaxError) -> YAMLNode {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw error(row, column, "nesting deeper than \(Self.maximumDepth) levels") }
        let line = lines[row]
        let first = line[column]
        if isIndicator(line, column, "-") {
            if afterKey { throw error(row, column, "a list cannot start on the line of its key; put '- item' on the next line") }
            return try sequence(indent: column)
        }
        switch first {
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            var cursor = (row, column)
            let value = try flowNode(&cursor)
            try expectLineEnd(cursor.0, cursor.1)
            row = cursor.0 + 1
            return value
        case UInt8(ascii: "|"), UInt8(ascii: ">"):
            return try blockScalar(at: column, parentIndent: parentIndent)
        case UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"):
            throw error(row, column, "anchors, aliases and tags are not supported in the configuration")
        case UInt8(ascii: "?") where isIndicator(line, column, "?"):
            throw error(row, column, "complex '?' keys are not supported")
        default:
            break
        }
        if let key = try mappingKey(row, column) {
            if afterKey { throw error(row, key.colon, "a ': ' inside a value; quote the value, or put a mapping on the next line, indented") }
            return try mapping(indent: column)
        }
        let value = try inlineScalar(row, column)
        row += 1
        return value
    }

    private mutating func sequence(indent: Int) throws(YAMLSyntaxError) -> YAMLNode {
        let start = (row, indent)
        var items: [YAMLNode] = []
        // The first item may share its line with an enclosing item (`- - a`); the others line up.
        repeat {
            let itemRow = row
            let content = skipSpaces(lines[row], from: indent + 1)
            if isLineEnd(lines[row], content) {
                row += 1
                try skipBlank()
                if row < lines.count, let inner = try indentation(of: row), inner > indent {
                    items.append(try node(at: inner, parentIndent: indent, afterKey: false))
                } else {
                    items.append(YAMLNode(value: .scalar(""), line: itemRow + 1, column: column(itemRow, indent) + 1))
                }
            } else {
                items.append(try node(at: content, parentIndent: indent, afterKey: false))
            }
            try skipBlank()
            try rejectDeeperLine(than: indent)
        } while try linesUp(with: indent) && isIndicator(lines[row], indent, "-")
        return YAMLNode(value: .sequence(items), line: start.0 + 1, column: column(start.0, start.1))
    }

    private mutating func mapping(indent: Int) throws(YAMLSyntaxError) -> YAMLNode {
        let start = (row, indent)
        var entries: [(key: YAMLNode, value: YAMLNode)] = []
        // The first entry may share its line with a list item (`- key: value`); the others line up.
        repeat {
            if isIndicator(lines[row], indent, "-") {
                throw error(row, indent, "a list item where 'key: value' was expected; check the indentation")
            }
            guard let key = try mappingKey(row, indent) else {
                throw error(row, indent, "expected 'key: value'")
            }
            let keyRow = row
            let content = skipSpaces(lines[row], from: key.colon + 1)
            let value: YAMLNode
            if isLineEnd(lines[row], content) {
                row += 1
                try skipBlank()
                let next = row < lines.count ? try indentation(of: row) : nil
                if let next, next > indent {
                    value = try node(at: next, parentIndent: indent, afterKey: false)
                } else if let next, next == indent, isIndicator(lines[row], indent, "-") {
                    value = try sequence(indent: indent)
                } else {
                    value = YAMLNode(value: .scalar(""), line: keyRow + 1, column: column(keyRow, key.colon) + 1)
                }
            } else {
                value = try node(at: content, parentIndent: indent, afterKey: true)
            }
            entries.append((key.node, value))
            try skipBlank()
            try rejectDeeperLine(than: indent)
        } while try linesUp(with: indent)
        return YAMLNode(value: .mapping(entries), line: start.0 + 1, column: column(start.0, start.1))
    }

    /// A `key:` at `column` of line `row` (plain or quoted key, then a colon followed by a space or
    /// the end of the line), or nil when the text there is not a key.
    private func mappingKey(_ row: Int, _ column: Int) throws(YAMLSyntaxError) -> (node: YAMLNode, colon: Int)? {
        let line = lines[row]
        if line[column] == UInt8(ascii: "\"") || line[column] == UInt8(ascii: "'") {
            var cursor = (row, column)
            let key = try quoted(&cursor)
            let colon = skipSpaces(line, from: cursor.1)
            guard colon < line.count, line[colon] == UInt8(ascii: ":"), isSeparated(line, colon + 1) else { return nil }
            return (key, colon)
        }
        guard !Self.indicators.contains(line[column]) else { return nil }
        var index = column
        while index < line.count {
            let byte = line[index]
            if byte == UInt8(ascii: "#"), index > column, isSpace(line[index - 1]) { return nil }
            if byte == UInt8(ascii: ":"), isSeparated(line, index + 1) {
                var end = index
                while end > column, isSpace(line[end - 1]) { end -= 1 }
                return (YAMLNode(value: .scalar(String(decoding: line[column..<end], as: UTF8.self)),
                                 line: row + 1, column: self.column(row, column)), index)
            }
            index += 1
        }
        return nil
    }

    /// A plain or quoted scalar that must end on its line (a comment may follow).
    private func inlineScalar(_ row: Int, _ column: Int) throws(YAMLSyntaxError) -> YAMLNode {
        let line = lines[row]
        if line[column] == UInt8(ascii: "\"") || line[column] == UInt8(ascii: "'") {
            var cursor = (row, column)
            let value = try quoted(&cursor)
            try expectLineEnd(row, cursor.1)
            return value
        }
        if Self.indicators.contains(line[column]) {
            throw error(row, column, "a value cannot start with '\(Character(Unicode.Scalar(line[column])))'; quote it")
        }
        var end = column
        while end < line.count, !(end > column && line[end] == UInt8(ascii: "#") && isSpace(line[end - 1])) { end += 1 }
        while end > column, isSpace(line[end - 1]) { end -= 1 }
        // No ': ' can be left in here: `node` found none (`mappingKey` stops at the same comment).
        return YAMLNode(value: .scalar(String(decoding: line[column..<end], as: UTF8.self)), line: row + 1, column: self.column(row, column))
    }

    /// A literal (`|`) or folded (`>`) block scalar whose header is at `column` of the current line.
    private mutating func blockScalar(at column: Int, parentIndent: Int) throws(YAMLSyntaxError) -> YAMLNode {
        let header = lines[row]
        let start = (row, column)
        let folded = header[column] == UInt8(ascii: ">")
        var chomp: UInt8?
        var explicitIndent: Int?
        var index = column + 1
        while index < header.count, !isSpace(header[index]) {
            let byte = header[index]
            if chomp == nil, byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") {
                chomp = byte
            } else if explicitIndent == nil, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte) {
                explicitIndent = Int(byte - UInt8(ascii: "0"))
            } else {
                throw error(row, index, "a block scalar header is '|' or '>' with an optional '-', '+' or indentation digit")
            }
            index += 1
        }
        try expectLineEnd(row, index)
        row += 1
        let baseIndent = max(parentIndent, 0)
        var contentIndent = explicitIndent.map { baseIndent + $0 }
        var contentLines: [ArraySlice<UInt8>] = []
        while row < lines.count {
            let line = lines[row]
            let spaces = line.prefix { $0 == UInt8(ascii: " ") }.count
            if spaces == line.count {
                contentLines.append([])
                row += 1
                continue
            }
            if contentIndent == nil {
                guard spaces > parentIndent else { break }
                contentIndent = spaces
            }
            guard let contentIndent, spaces >= contentIndent else { break }
            contentLines.append(line[contentIndent...])
            row += 1
        }
        // Trailing empty lines belong to the scalar only for chomping; give back the rest to the caller.
        var trailing = 0
        while let last = contentLines.last, last.isEmpty {
            contentLines.removeLast()
            trailing += 1
        }
        var text: [UInt8] = []
        for (position, line) in contentLines.enumerated() {
            if position > 0 {
                // Folding joins two plain lines with a space, and drops the break before empty lines.
                let previous = contentLines[position - 1]
                let previousFolds = folded && !previous.isEmpty && !isSpace(previous.first!)
                if !(previousFolds && line.isEmpty) {
                    text.append(previousFolds && !isSpace(line.first!) ? UInt8(ascii: " ") : UInt8(ascii: "\n"))
                }
            }
            text.append(contentsOf: line)
        }
        if !contentLines.isEmpty {
            switch chomp {
            case UInt8(ascii: "-"): break
            case UInt8(ascii: "+"): text.append(contentsOf: [UInt8](repeating: UInt8(ascii: "\n"), count: trailing + 1))
            default: text.append(UInt8(ascii: "\n"))
            }
        }
        return YAMLNode(value: .scalar(String(decoding: text, as: UTF8.self)), line: start.0 + 1, column: self.column(start.0, start.1))
    }

    // MARK: Flow collections

    /// A flow node at `cursor` (row, byte column), which may span lines; `cursor` ends after it.
    private mutating func flowNode(_ cursor: inout (Int, Int)) throws(YAMLSyntaxError) -> YAMLNode {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw error(cursor.0, cursor.1, "nesting deeper than \(Self.maximumDepth) levels") }
        try skipFlowSpace(&cursor)
        let (row, column) = cursor
        let line = lines[row]
        switch line[column] {
        case UInt8(ascii: "["):
            cursor.1 += 1
            var items: [YAMLNode] = []
            while true {
                try skipFlowSpace(&cursor)
                if lines[cursor.0][cursor.1] == UInt8(ascii: "]") { break }
                items.append(try flowNode(&cursor))
                if try flowSeparator(&cursor, closing: "]") { break }
            }
            cursor.1 += 1
            return YAMLNode(value: .sequence(items), line: row + 1, column: self.column(row, column))
        case UInt8(ascii: "{"):
            cursor.1 += 1
            var entries: [(key: YAMLNode, value: YAMLNode)] = []
            while true {
                try skipFlowSpace(&cursor)
                if lines[cursor.0][cursor.1] == UInt8(ascii: "}") { break }
                let key = try flowNode(&cursor)
                try skipFlowSpace(&cursor)
                guard lines[cursor.0][cursor.1] == UInt8(ascii: ":") else {
                    throw error(cursor.0, cursor.1, "expected ':' after a key in '{…}'")
                }
                cursor.1 += 1
                try skipFlowSpace(&cursor)
                let next = lines[cursor.0][cursor.1]
                if next == UInt8(ascii: ",") || next == UInt8(ascii: "}") {
                    entries.append((key, YAMLNode(value: .scalar(""), line: cursor.0 + 1, column: self.column(cursor.0, cursor.1))))
                } else {
                    entries.append((key, try flowNode(&cursor)))
                }
                if try flowSeparator(&cursor, closing: "}") { break }
            }
            cursor.1 += 1
            return YAMLNode(value: .mapping(entries), line: row + 1, column: self.column(row, column))
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return try quoted(&cursor)
        case UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"):
            throw error(row, column, "anchors, aliases and tags are not supported in the configuration")
        case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"):
            throw error(row, column, "expected a value before '\(Character(Unicode.Scalar(line[column])))'")
        default:
            var end = column
            while end < line.count {
                let byte = line[end]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "[")
                    || byte == UInt8(ascii: "{") { break }
                if byte == UInt8(ascii: ":"), end + 1 == line.count || isSpace(line[end + 1]) || ",]}".utf8.contains(line[end + 1]) { break }
                if byte == UInt8(ascii: "#"), end > column, isSpace(line[end - 1]) { break }
                end += 1
            }
            cursor.1 = end
            while end > column, isSpace(line[end - 1]) { end -= 1 }
            return YAMLNode(value: .scalar(String(decoding: line[column..<end], as: UTF8.self)), line: row + 1, column: self.column(row, column))
        }
    }

    /// After an item: true at the closing bracket (left under the cursor), false after a comma.
    private func flowSeparator(_ cursor: inout (Int, Int), closing: Character) throws(YAMLSyntaxError) -> Bool {
        try skipFlowSpace(&cursor)
        let byte = lines[cursor.0][cursor.1]
        if byte == UInt8(ascii: ",") {
            cursor.1 += 1
            return false
        }
        if byte == closing.asciiValue! { return true }
        throw error(cursor.0, cursor.1, "expected ',' or '\(closing)'")
    }

    /// Moves past spaces, line breaks and comments inside a flow collection; the end of the file
    /// there is an error, since the collection is not closed.
    private func skipFlowSpace(_ cursor: inout (Int, Int)) throws(YAMLSyntaxError) {
        while cursor.0 < lines.count {
            let line = lines[cursor.0]
            cursor.1 = skipSpaces(line, from: cursor.1)
            if cursor.1 < line.count, line[cursor.1] != UInt8(ascii: "#") { return }
            cursor = (cursor.0 + 1, 0)
        }
        let last = lines.count - 1
        throw error(last, lines[last].count, "the file ends inside a '[…]' or '{…}'; a closing bracket is missing")
    }

    // MARK: Scalars

    /// A single- or double-quoted scalar at `cursor`; it must close on the same line.
    private func quoted(_ cursor: inout (Int, Int)) throws(YAMLSyntaxError) -> YAMLNode {
        let (row, column) = cursor
        let line = lines[row]
        let quote = line[column]
        var text: [UInt8] = []
        var index = column + 1
        while true {
            guard index < line.count else {
                throw error(row, column, "this quoted value does not close on its line (multi-line quoted values are not supported)")
            }
            let byte = line[index]
            if byte == quote {
                if quote == UInt8(ascii: "'"), index + 1 < line.count, line[index + 1] == quote {
                    text.append(quote)
                    index += 2
                    continue
                }
                break
            }
            if quote == UInt8(ascii: "\""), byte == UInt8(ascii: "\\") {
                index = try escape(line, row, index, into: &text)
                continue
            }
            text.append(byte)
            index += 1
        }
        cursor.1 = index + 1
        return YAMLNode(value: .scalar(String(decoding: text, as: UTF8.self)), line: row + 1, column: self.column(row, column))
    }

    /// The one-character escapes of a double-quoted scalar (YAML 1.2, 5.7).
    private static let simpleEscapes: [UInt8: Unicode.Scalar] = [
        UInt8(ascii: "0"): "\0", UInt8(ascii: "a"): "\u{07}", UInt8(ascii: "b"): "\u{08}", UInt8(ascii: "t"): "\t",
        UInt8(ascii: "\t"): "\t", UInt8(ascii: "n"): "\n", UInt8(ascii: "v"): "\u{0B}", UInt8(ascii: "f"): "\u{0C}",
        UInt8(ascii: "r"): "\r", UInt8(ascii: "e"): "\u{1B}", UInt8(ascii: " "): " ", UInt8(ascii: "\""): "\"",
        UInt8(ascii: "/"): "/", UInt8(ascii: "\\"): "\\", UInt8(ascii: "N"): "\u{85}", UInt8(ascii: "_"): "\u{A0}",
        UInt8(ascii: "L"): "\u{2028}", UInt8(ascii: "P"): "\u{2029}",
    ]

    /// Decodes the escape at `index` (a backslash) of a double-quoted scalar; returns the index after it.
    private func escape(_ line: [UInt8], _ row: Int, _ index: Int, into text: inout [UInt8]) throws(YAMLSyntaxError) -> Int {
        guard index + 1 < line.count else { throw error(row, index, "a backslash at the end of a quoted value") }
        let letter = line[index + 1]
        if let scalar = Self.simpleEscapes[letter] {
            text.append(contentsOf: String(scalar).utf8)
            return index + 2
        }
        let digits = letter == UInt8(ascii: "x") ? 2 : letter == UInt8(ascii: "u") ? 4 : letter == UInt8(ascii: "U") ? 8 : 0
        guard digits > 0 else { throw error(row, index, "unknown escape '\\\(Character(Unicode.Scalar(letter)))'") }
        let hexStart = index + 2
        guard hexStart + digits <= line.count,
              let code = UInt32(String(decoding: line[hexStart..<hexStart + digits], as: UTF8.self), radix: 16),
              let scalar = Unicode.Scalar(code) else {
            throw error(row, index, "'\\\(Character(Unicode.Scalar(letter)))' needs \(digits) hexadecimal digits of a valid code point")
        }
        text.append(contentsOf: String(scalar).utf8)
        return hexStart + digits
    }

    // MARK: Lines

    /// Characters that cannot start a plain scalar or key.
    private static let indicators: Set<UInt8> = Set("[]{},#&*!|>'\"%@`".utf8)

    /// The indentation of line `row`, or nil for a blank or comment-only line; a tab in the
    /// indentation is an error.
    private func indentation(of row: Int) throws(YAMLSyntaxError) -> Int? {
        let line = lines[row]
        var index = 0
        while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
        if index < line.count, line[index] == UInt8(ascii: "\t") {
            let content = skipSpaces(line, from: index)
            if content == line.count || line[content] == UInt8(ascii: "#") { return nil }
            throw error(row, index, "a tab in the indentation; YAML indents with spaces")
        }
        if index == line.count || line[index] == UInt8(ascii: "#") { return nil }
        return index
    }

    private mutating func skipBlank() throws(YAMLSyntaxError) {
        while row < lines.count, try indentation(of: row) == nil { row += 1 }
    }

    /// True when the current line exists and is indented by exactly `indent`.
    private func linesUp(with indent: Int) throws(YAMLSyntaxError) -> Bool {
        guard row < lines.count, !isMarker("---"), !isMarker("...") else { return false }
        return try indentation(of: row) == indent
    }

    private func rejectDeeperLine(than indent: Int) throws(YAMLSyntaxError) {
        if row < lines.count, let next = try indentation(of: row), next > indent {
            throw error(row, next, "unexpected indentation (a value over several lines needs '|' or '>')")
        }
    }

    private func isMarker(_ marker: String) -> Bool {
        let line = lines[row]
        let bytes = Array(marker.utf8)
        return line.starts(with: bytes) && isLineEnd(line, skipSpaces(line, from: bytes.count))
    }

    /// True when `character` stands at `column` followed by a space or the end of the line.
    private func isIndicator(_ line: [UInt8], _ column: Int, _ character: Character) -> Bool {
        column < line.count && line[column] == character.asciiValue! && isSeparated(line, column + 1)
    }

    private func isSeparated(_ line: [UInt8], _ index: Int) -> Bool {
        index >= line.count || isSpace(line[index])
    }

    private func isLineEnd(_ line: [UInt8], _ index: Int) -> Bool {
        index >= line.count || line[index] == UInt8(ascii: "#")
    }

    /// Only spaces and a comment may follow a value that ends at `index` of line `row`.
    private func expectLineEnd(_ row: Int, _ index: Int) throws(YAMLSyntaxError) {
        let line = lines[row]
        let rest = skipSpaces(line, from: index)
        guard rest < line.count else { return }
        guard line[rest] == UInt8(ascii: "#") else { throw error(row, rest, "unexpected text after the value") }
        if rest == index { throw error(row, rest, "a comment needs a space before '#'") }
    }

    private func skipSpaces(_ line: [UInt8], from index: Int) -> Int {
        var index = index
        while index < line.count, isSpace(line[index]) { index += 1 }
        return index
    }

    private func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// The 1-based character column of byte `index` in line `row`.
    private func column(_ row: Int, _ index: Int) -> Int {
        guard let table = characterColumns[row] else { return index + 1 }
        return Int(table[min(index, table.count - 1)])
    }

    private func error(_ row: Int, _ index: Int, _ message: String) -> YAMLSyntaxError {
        YAMLSyntaxError(line: row + 1, column: column(row, index), message: message)
    }
}
