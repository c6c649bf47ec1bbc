import WeaveReaders
/// The keys of one mapping of the configuration (a check's), read with the loader's value rules and
/// positioned errors. A missing optional key reads as nil.
struct ConfigurationFields {
    let loader: ConfigurationLoader
    /// The mapping itself, for errors about a missing key.
    let node: YAMLNode
    let values: [String: YAMLNode]
    /// The check type's name, for messages such as "a tcp check needs host".
    let typeName: String

    subscript(_ key: String) -> YAMLNode? { values[key] }

    /// The node of a key the check cannot do without.
    func required(_ key: String) throws(ConfigurationError) -> YAMLNode {
        guard let value = values[key] else { throw loader.error(node, "a \(typeName) check needs \(key)") }
        return value
    }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        try values[key].map { node throws(ConfigurationError) in try loader.string(node) }
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        try values[key].map { node throws(ConfigurationError) in try loader.integer(node, in: range) }
    }

    func number(_ key: String, atMost limit: Double) throws(ConfigurationError) -> Double? {
        try values[key].map { node throws(ConfigurationError) in try loader.number(node, atMost: limit) }
    }

    func duration(_ key: String, atMost limit: Duration, _ limitText: String) throws(ConfigurationError) -> Duration? {
        try values[key].map { node throws(ConfigurationError) in try loader.duration(node, atMost: limit, limitText) }
    }

    func boolean(_ key: String) throws(ConfigurationError) -> Bool? {
        try values[key].map { node throws(ConfigurationError) in try loader.boolean(node) }
    }

    /// A list of values, or one value taken as a list of one.
    func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let value = values[key] else { return nil }
        guard case .sequence(let items) = value.value else { return [try loader.string(value)] }
        var result: [String] = []
        for item in items { result.append(try loader.string(item)) }
        return result
    }

    /// An error at `key`'s value, or at the mapping when the key is absent.
    func error(_ key: String, _ message: String) -> ConfigurationError {
        loader.error(values[key] ?? node, message)
    }
}
