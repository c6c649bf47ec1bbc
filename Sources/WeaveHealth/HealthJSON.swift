import WeaveSupport

/// An application/health+json document (the IETF health-check draft, as `HealthRouter` writes it)
/// read into its parts, with no policy of its own: the probe and weave-healthd each decide what a
/// missing or unknown status means.
package struct HealthJSON: Sendable {
    /// One member of `checks`.
    package struct Check: Sendable {
        /// The key without its `:status` suffix.
        package let name: String
        /// Whether the value is a list with a first entry (the fields below come from it).
        package let hasEntry: Bool
        package let status: String?
        package let output: String?
        package let observedValue: Double?
        package let observedUnit: String?
        /// When the state began (`changedAt`, seconds since the epoch); nil when absent or not a UTC RFC 3339 time.
        package let changedAt: Double?
    }

    package let status: String?
    package let output: String?
    /// In the document's order; empty when `checks` is missing or not an object.
    package let checks: [Check]

    /// Nil when `body` is not valid JSON, or when an object of it that is read gives a key twice: two
    /// `status` keys, or two entries for one check, are an ambiguous answer, not the first of them.
    package init?(_ body: [UInt8]) {
        guard let json = JSONValue.parse(body), !Self.repeatsAKey(json) else { return nil }
        status = json["status"]?.string
        output = json["output"]?.string
        guard case .object(let members)? = json["checks"] else {
            checks = []
            return
        }
        guard !Self.repeatsAKey(.object(members)), !members.contains(where: { Self.repeatsAKey($0.1) }) else { return nil }
        checks = members.map { key, value in
            let name = key.hasSuffix(":status") ? String(key.dropLast(":status".count)) : key
            guard case .array(let entries) = value, let entry = entries.first else {
                return Check(name: name, hasEntry: false, status: nil, output: nil, observedValue: nil, observedUnit: nil, changedAt: nil)
            }
            return Check(name: name, hasEntry: true, status: entry["status"]?.string, output: entry["output"]?.string,
                         observedValue: entry["observedValue"]?.number, observedUnit: entry["observedUnit"]?.string,
                         changedAt: entry["changedAt"]?.string.flatMap { Timestamp.seconds(rfc3339: $0) })
        }
    }

    /// Whether `value` is an object with a key twice, or an array whose first entry is one.
    private static func repeatsAKey(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members):
            var keys = Set<String>()
            return !members.allSatisfy { keys.insert($0.0).inserted }
        case .array(let entries):
            return entries.first.map(repeatsAKey) ?? false
        default:
            return false
        }
    }
}
