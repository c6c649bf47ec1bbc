/// A node of a YAML document, with the 1-based line and column where it starts.
struct YAMLNode {
    enum Value {
        /// A scalar as written (after unquoting and escapes); an empty value is `""`.
        case scalar(String)
        case sequence([YAMLNode])
        /// Entries in document order; duplicate keys are left for the reader of the document to reject.
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    var value: Value
    var line: Int
    var column: Int
}

/// A YAML syntax error at a 1-based line and column.
struct YAMLSyntaxError: Error, Equatable {
    var line: Int
    var column: Int
    var message: String
}
