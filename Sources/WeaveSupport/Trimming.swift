extension StringProtocol {
    /// Without whitespace (spaces, tabs, line ends) at either end.
    package func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}

extension String {
    /// At most `maxBytes` bytes of UTF-8, cut at a character boundary, with `…` when it was longer.
    package func prefix(maxUTF8Bytes maxBytes: Int) -> String {
        guard utf8.count > maxBytes else { return self }
        var kept = ""
        var bytes = 0
        for character in self {
            bytes += character.utf8.count
            if bytes > maxBytes - 3 { break }
            kept.append(character)
        }
        return kept + "…"
    }
}
