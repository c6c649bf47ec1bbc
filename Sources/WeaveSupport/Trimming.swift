extension StringProtocol {
    /// Without whitespace (spaces, tabs, line ends) at either end.
    package func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}

extension String {
    /// At most `maxBytes` bytes of UTF-8, cut at a scalar's end, with `…` when cut.
    package func prefix(maxUTF8Bytes maxBytes: Int) -> String {
        guard utf8.count > maxBytes else { return self }
        var kept = 0
        var end = unicodeScalars.startIndex
        for index in unicodeScalars.indices {
            let size = UTF8.width(unicodeScalars[index])
            if kept + size > maxBytes - 3 { break }
            kept += size
            end = unicodeScalars.index(after: index)
        }
        return String(unicodeScalars[..<end]) + "…"
    }
}
