import WeaveSupport

/// One "made with" relation: the factory of `from` resolved `to`.
public struct DependencyEdge: Hashable, Sendable {
    /// The service whose factory did the resolving.
    public let from: RegistrationKey
    /// The service it resolved.
    public let to: RegistrationKey
}

/// The edges a container recorded as its factories resolved other services.
public struct DependencyGraph: Sendable {
    /// Edges sorted by dependent, then dependency.
    public let edges: [DependencyEdge]

    init(edges: some Sequence<DependencyEdge>) {
        self.edges = edges.sorted {
            ($0.from.description, $0.to.description) < ($1.from.description, $1.to.description)
        }
    }

    /// The graph in Graphviz DOT, one `"A" -> "B";` line per edge.
    public var dot: String {
        var text = "digraph WeaveDI {\n"
        for edge in edges {
            text += "  \(dotQuoted(edge.from.description)) -> \(dotQuoted(edge.to.description));\n"
        }
        return text + "}\n"
    }

    /// The graph as JSON: `{"edges":[{"from":"A","to":"B"}]}`.
    public var json: String {
        let items = edges.map { "{\"from\":\(JSONText.quoted($0.from.description)),\"to\":\(JSONText.quoted($0.to.description))}" }
        return "{\"edges\":[\(items.joined(separator: ","))]}"
    }

    private func dotQuoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\\" || character == "\"" { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }
}
