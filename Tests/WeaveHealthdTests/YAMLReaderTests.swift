import Testing
@testable import WeaveHealthd
import WeaveReaders
import WeaveTestSupport

@Suite struct YAMLReaderTests {
    /// A compact spelling of a node: scalars quoted with line feeds as `\n`, `[a,b]`, `{k:v}`.
    private func shape(_ text: String) throws(YAMLSyntaxError) -> String {
        guard let node = try YAMLReader.parse(text) else { return "nil" }
        return shape(node)
    }

    private func shape(_ node: YAMLNode) -> String {
        switch node.value {
        case .scalar(let text): return "\"" + text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\\n") + "\""
        case .sequence(let items): return "[" + items.map(shape).joined(separator: ",") + "]"
        case .mapping(let entries): return "{" + entries.map { shape($0.key) + ":" + shape($0.value) }.joined(separator: ",") + "}"
        }
    }

    @Test func blockAndFlowCollections() throws {
        let text = """
            a: 1
            b:
              - x
              - y: 2
                z: "q # not a comment"   # a comment
            c:
            - p
            - [m, 'n''s', {k: v}]
            d: {e: [1, 2], f: }
            g: [
              multi,   # a comment inside
              line
            ]
            """
        #expect(try shape(text) == #"{"a":"1","b":["x",{"y":"2","z":"q # not a comment"}],"c":["p",["m","n's",{"k":"v"}]],"d":{"e":["1","2"],"f":""},"g":["multi","line"]}"#)
    }

    @Test func nestedSequencesAndEmptyValues() throws {
        #expect(try shape("- - a\n  - b\n- c\n-\n") == #"[["a","b"],"c",""]"#)
        #expect(try shape("a:\nb: ~\nc: http://x:80/y\n") == #"{"a":"","b":"~","c":"http://x:80/y"}"#)
    }

    @Test func markersLineEndingsAndComments() throws {
        #expect(try shape("\u{FEFF}--- # start\r\nkey: value # trailing\r\n\r\n# only a comment\r\n...\r\n") == #"{"key":"value"}"#)
        #expect(try shape("# nothing here\n\n") == "nil")
    }

    @Test func blockScalars() throws {
        let text = """
            lit: |
              line one
               indented

              last
            fold: >-
              a
              b

              c
            keep: |+
              x

            end: 1
            """
        #expect(try shape(text) == #"{"lit":"line one\n indented\n\nlast\n","fold":"a b\nc","keep":"x\n\n","end":"1"}"#)
    }

    @Test func doubleQuotedEscapes() throws {
        #expect(try shape(#"s: "tab\there \u00e9 \x41 \\ \" \/""#) == "{\"s\":\"tab\there é A \\ \" /\"}")
    }

    @Test func positionsOfNodes() throws {
        let root = try #require(try YAMLReader.parse("top:\n  - name: a\n    port: 80\n"))
        guard case .mapping(let top) = root.value, case .sequence(let items) = top[0].value.value,
              case .mapping(let fields) = items[0].value else { Issue.record("unexpected shape"); return }
        #expect((fields[1].key.line, fields[1].key.column) == (3, 5))
        #expect((fields[1].value.line, fields[1].value.column) == (3, 11))
    }

    @Test(arguments: [
        ("a: [1, 2\n", 2, 1, "closing bracket is missing"),
        ("a: 1\n  b: 2\n", 2, 3, "unexpected indentation"),
        ("ké: &x 1\n", 1, 5, "anchors, aliases and tags"),
        ("a: b: c\n", 1, 5, "': ' inside a value"),
        ("a:\n\t- b\n", 2, 1, "a tab in the indentation"),
        ("a: \"open\n", 1, 4, "does not close"),
        ("a: 1\n---\nb: 2\n", 2, 1, "only one YAML document"),
        ("a: 1\n- b\n", 2, 1, "a list item where 'key: value' was expected"),
        ("a: \"x\" y\n", 1, 8, "unexpected text after the value"),
        ("- a\nb: 1\n", 2, 1, "unexpected content here"),
        ("a: \"\\q\"\n", 1, 5, "unknown escape"),
        ("a: |x\n", 1, 5, "block scalar header"),
        ("a: - b\n", 1, 4, "a list cannot start on the line of its key"),
        ("a: [b c: d]\n", 1, 8, "expected ',' or ']'"),
        (String(repeating: "[", count: 100), 1, 64, "nesting deeper than 64 levels"),
    ])
    func syntaxErrors(text: String, line: Int, column: Int, message: String) {
        #expect {
            _ = try YAMLReader.parse(text)
        } throws: { error in
            guard let error = error as? YAMLSyntaxError else { return false }
            return error.line == line && error.column == column && error.message.contains(message)
        }
    }

    /// Every truncation of a real configuration, and every one of its bytes replaced by a YAML
    /// indicator, either parses or throws a positioned error: never a crash or a hang.
    @Test func damagedConfigurationsNeverCrash() async {
        // Seconds in a debug build: on a thread of its own, and what went wrong comes back as text.
        let (parsed, rejected, failures) = await onThreadOfItsOwn(Self.attemptAll)
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        #expect(parsed > 0 && rejected > 0)
    }

    /// Parses every damaged configuration: how many parsed, how many were rejected, and the
    /// rejections without a position.
    static func attemptAll() -> (parsed: Int, rejected: Int, failures: [String]) {
        let bytes = Array(Defaults.configuration.utf8) + Array("extra: {a: [1, 'x'], b: \"y\"}\nblock: |\n  text\n".utf8)
        var (parsed, rejected, failures) = (0, 0, [String]())
        func attempt(_ candidate: [UInt8]) {
            do {
                _ = try YAMLReader.parse(String(decoding: candidate, as: UTF8.self))
                parsed += 1
            } catch {
                if !(error.line >= 1 && error.column >= 1) { failures.append("\(error)") }
                rejected += 1
            }
        }
        for length in 0...bytes.count { attempt(Array(bytes[..<length])) }
        for index in bytes.indices {
            for replacement in "[]{}:-#\"'|>\t&\n ".utf8 {
                var candidate = bytes
                candidate[index] = replacement
                attempt(candidate)
            }
        }
        return (parsed, rejected, failures)
    }
}
