/// A node of a YAML document, with the 1-based line and column where it starts.
package struct YAMLNode {
    package enum Value {
        /// A scalar as written (after unquoting and escapes); an empty value is `""`.
        case scalar(String)
        case sequence([YAMLNode])
        /// Entries in document order; duplicate keys are left for the reader of the document to reject.
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    package var value: Value
    package var line: Int
    package var column: Int
}

/// A YAML syntax error at a 1-based line and column.
package struct YAMLSyntaxError: Error, Equatable {
    package var line: Int
    package var column: Int
    package var message: String
}
