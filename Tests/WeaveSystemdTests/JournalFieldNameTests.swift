import Testing
@testable import WeaveSystemd

@Suite struct JournalFieldNameTests {
    @Test(arguments: [
        ("check", "WEAVE_CHECK"),
        ("state_from", "WEAVE_STATE_FROM"),
        ("http.status-code", "WEAVE_HTTP_STATUS_CODE"),
        ("_trusted", "WEAVE_TRUSTED"),
        ("9lives", "WEAVE_9LIVES"),
        ("UNIT", "WEAVE_UNIT"),
        ("WEAVE_CHECK", "WEAVE_CHECK"),
        ("ünïcode key", "WEAVE_N_CODE_KEY"),
        ("", "WEAVE_FIELD"),
        ("..", "WEAVE_FIELD"),
    ])
    func sanitizes(_ key: String, _ expected: String) {
        let name = JournalFieldName.sanitized(key, prefix: "WEAVE_")
        #expect(name == expected)
        #expect(JournalFieldName.isValid(name))
    }

    @Test func cutsTo64Characters() {
        let name = JournalFieldName.sanitized(String(repeating: "a", count: 100), prefix: "WEAVE_")
        #expect(name.count == 64)
        #expect(name == "WEAVE_" + String(repeating: "A", count: 58))
    }

    @Test func validity() {
        #expect(JournalFieldName.isValid("MESSAGE_ID"))
        #expect(!JournalFieldName.isValid("_PID"))
        #expect(!JournalFieldName.isValid("1ABC"))
        #expect(!JournalFieldName.isValid("lower"))
        #expect(!JournalFieldName.isValid(""))
        #expect(!JournalFieldName.isValid(String(repeating: "A", count: 65)))
    }
}
