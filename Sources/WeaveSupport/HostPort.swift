/// `host:port` as configurations and URLs write it: `127.0.0.1:9096`, `[::1]:9096`, `name:80`.
package enum HostPort {
    /// Host and port of `text`; without a port, `defaultPort` if given, else nil. IPv6 literals are
    /// bracketed (the brackets are not part of the host); ports are 1 to 65535; the host is not empty.
    package static func parse<S: StringProtocol>(_ text: S, defaultPort: Int? = nil) -> (host: String, port: Int)? {
        let text = Substring(text)
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        guard !host.isEmpty else { return nil }
        guard let portText else { return defaultPort.map { (String(host), $0) } }
        guard let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }

    /// `host:port`, an IPv6 host bracketed.
    package static func format(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
