import Logging
import WeaveSupport

/// One log entry, as journald fields and as the one-line fallback on standard error.
struct JournalEntry {
    let level: Logger.Level
    let message: String
    let label: String
    let identifier: String
    let file: String
    let function: String
    let line: UInt
    /// Metadata as (field name, value), flattened and sanitized, sorted by name.
    let metadataFields: [(name: String, value: String)]
    /// The field that carries `label` (`<prefix>LOGGER`); the one-line form shows the label itself.
    let labelField: String
    var messageID: String?
    var errno: Int32?

    init(level: Logger.Level, message: String, metadata: Logger.Metadata, label: String, identifier: String,
         file: String, function: String, line: UInt, fieldPrefix: String) {
        self.level = level
        self.message = message
        self.label = label
        self.identifier = identifier
        self.file = file
        self.function = function
        self.line = line
        var fields: [(String, String)] = []
        for (key, value) in metadata {
            switch key {
            case "message_id":
                if case .string(let id) = value, Self.isMessageID(id) { messageID = id; continue }
            case "errno":
                if let code = Self.errno(of: value) { errno = code; continue }
            default:
                break
            }
            Self.flatten(key, value) { fields.append((JournalFieldName.sanitized($0, prefix: fieldPrefix), $1)) }
        }
        labelField = fieldPrefix + "LOGGER"
        metadataFields = fields.sorted { $0.0 < $1.0 }
    }

    /// syslog priorities: 2 crit, 3 err, 4 warning, 5 notice, 6 info, 7 debug.
    var priority: Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The entry as `FIELD=value` strings for `sd_journal_sendv`.
    var fields: [String] {
        var result = [
            "MESSAGE=\(message)", "PRIORITY=\(priority)", "SYSLOG_IDENTIFIER=\(identifier)",
            "CODE_FILE=\(file)", "CODE_LINE=\(line)", "CODE_FUNC=\(function)",
        ]
        if let messageID { result.append("MESSAGE_ID=\(messageID)") }
        if let errno { result.append("ERRNO=\(errno)") }
        for field in metadataFields { result.append("\(field.name)=\(field.value)") }
        result.append("\(labelField)=\(label)")
        return result
    }

    /// `2026-11-23T10:04:05+0000 warning weave.health: message WEAVE_CHECK=disk …`, made `logSafe`
    /// (control and invisible characters escaped, `\u{A}`) so that one entry is one inert line.
    var oneLine: String {
        var text = "\(Self.localTimestamp()) \(level) \(label): \(message)"
        if let messageID { text += " MESSAGE_ID=\(messageID)" }
        if let errno { text += " ERRNO=\(errno)" }
        for field in metadataFields {
            text += " \(field.name)=\(field.value.contains(" ") ? "\"\(field.value)\"" : field.value)"
        }
        return text.logSafe + "\n"
    }

    /// Writes `oneLine` with one `write` per entry, retrying on a short write or EINTR.
    func writeLine(to descriptor: Int32) {
        var bytes = Array(oneLine.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if Glibc.errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    // MARK: Helpers

    static func isMessageID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70) }
    }

    static func errno(of value: Logger.Metadata.Value) -> Int32? {
        switch value {
        case .string(let text): return Int32(text)
        case .stringConvertible(let convertible):
            if let carrier = convertible as? any ErrnoCarrying { return carrier.errnoValue }
            return Int32(convertible.description)
        default: return nil
        }
    }

    /// Calls `emit` with (`key`, text) for a scalar, and recursively `key_sub` / `key_index` for nested values.
    static func flatten(_ key: String, _ value: Logger.Metadata.Value, _ emit: (String, String) -> Void) {
        switch value {
        case .string(let text): emit(key, text)
        case .stringConvertible(let convertible): emit(key, convertible.description)
        case .dictionary(let dictionary):
            for (sub, nested) in dictionary.sorted(by: { $0.key < $1.key }) { flatten("\(key)_\(sub)", nested, emit) }
        case .array(let values):
            for (index, nested) in values.enumerated() { flatten("\(key)_\(index)", nested, emit) }
        }
    }

    static func localTimestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
