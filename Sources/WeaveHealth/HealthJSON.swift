import WeaveSupport

/// The application/health+json document (the IETF health-check draft), written and read here only:
/// `write(_:…)` is what every `/health` answers (`HealthRouter`), `init?(_:)` reads one into its
/// parts with no policy of its own (the probe and weave-healthd each decide what a missing or
/// unknown status means).
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
        /// When the check last ran (`time`), read as `changedAt` is.
        package let time: Double?
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
                return Check(name: name, hasEntry: false, status: nil, output: nil, observedValue: nil, observedUnit: nil, changedAt: nil, time: nil)
            }
            return Check(name: name, hasEntry: true, status: entry["status"]?.string, output: entry["output"]?.string,
                         observedValue: entry["observedValue"]?.number, observedUnit: entry["observedUnit"]?.string,
                         changedAt: entry["changedAt"]?.string.flatMap { Timestamp.seconds(rfc3339: $0) },
                         time: entry["time"]?.string.flatMap { Timestamp.seconds(rfc3339: $0) })
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

extension HealthJSON {
    /// `report` as a document: `status` (`aggregate`'s), `version`, `serviceId`, `description`,
    /// `instance` and `output` when given, and a `<name>:status` member per check with its
    /// `componentId`, `status`, `time`, `changedAt` (not in the draft: when the state began, so that
    /// a reader shows the source's time), its observed value when `observedValue` has one, and its
    /// reason as `output` when `details` allows.
    package static func write(_ report: HealthReport, aggregate: HealthState, version: String, serviceID: String,
                              description: String, instance: String?, output: String?, details: Bool,
                              observedValue: (String) -> (value: Double, unit: String)?) -> String {
        // Written into one string, reserved up front: a daemon's /health of 40,000 components is
        // 15 MB, and pieces joined, then copied with a newline, held four times that per request.
        var body = "{\"status\":\"\(aggregate.ietfStatus)\",\"version\":\(JSONText.quoted(version))"
        body.reserveCapacity(256 + report.checks.count * 320)
        body += ",\"serviceId\":\(JSONText.quoted(serviceID)),\"description\":\(JSONText.quoted(description))"
        if let instance { body += ",\"instance\":\(JSONText.quoted(instance))" }
        if let output { body += ",\"output\":\(JSONText.quoted(output))" }
        body += ",\"checks\":{"
        for (index, name) in report.checks.keys.sorted().enumerated() {
            let record = report.checks[name]!
            if index > 0 { body += "," }
            body += "\(JSONText.quoted(name + ":status")):[{\"componentId\":\(JSONText.quoted(name))"
            body += ",\"status\":\"\(record.status.state.ietfStatus)\",\"time\":\"\(Timestamp.rfc3339(record.checkedAt))\""
            body += ",\"changedAt\":\"\(Timestamp.rfc3339(record.changedAt))\""
            if let observed = observedValue(name), observed.value.isFinite {
                body += ",\"observedValue\":\(observed.value),\"observedUnit\":\(JSONText.quoted(observed.unit))"
            }
            if details, let reason = record.status.reason {
                body += ",\"output\":\(JSONText.quoted(reason))"
            }
            body += "}]"
        }
        body += "}}\n"
        return body
    }
}
