import WeaveSupport

/// The applications' last slow resolutions with their chains, as their `/events` said (whether or
/// not the journal's rate limit wrote them): what `weave-health why APP/DEPENDENCY` shows beside
/// the dependency's startup chain.
///
/// Each application keeps the last slow resolution of each of its dependencies, the most recently
/// slow first, in `bytesPerApp` (about 14 dependencies with names of usual lengths, one at the
/// field limits): a flood of one dependency's slow resolutions replaces its own record, not the
/// others'. Bounded by bytes, each application by its own, for as many applications as names can
/// be bound (`AppOwners.maxNames`), so no application's chains take another's room and the whole
/// stays under `maxBytes` (#64). They are kept in the state directory (`slow-chains.json`, the
/// newest that fit in `maxFileBytes`), so a restarted daemon still knows them (#65).
final class AppSlowChains: Sendable {
    /// One slow resolution, its fields as read (`logSafe`, cut), packed: its names in one buffer.
    struct Slow: Sendable {
        /// Seconds since the Unix epoch.
        let time: Double
        let durationMicros: UInt64?
        let thresholdMicros: UInt64?
        /// Each run's total and self time in microseconds, paired with `chain` when both have the same length.
        let times: [(total: UInt64, own: UInt64)]
        /// The dependency, the slowest (or nothing) and the chain's runs, each ended by a 0 byte
        /// (fields are log-safe: no control character is left in them).
        private let names: [UInt8]

        /// Nil unless `fields` are a slow resolution's (`dependency` at least).
        init?(time: Double, fields: [String: String]) {
            guard let dependency = fields["dependency"] else { return nil }
            self.time = time
            durationMicros = fields["duration_usec"].flatMap { UInt64($0) }
            thresholdMicros = fields["threshold_usec"].flatMap { UInt64($0) }
            let chain = ChainFields(chain: fields["chain"], times: fields["chain_usec"], dependency: dependency)
            times = chain.times
            let parts = [dependency, fields["slowest"] ?? ""] + chain.names
            var names: [UInt8] = []
            names.reserveCapacity(parts.reduce(0) { $0 + $1.utf8.count + 1 })
            for part in parts {
                names += part.utf8.lazy.filter { $0 != 0 }
                names.append(0)
            }
            self.names = names
        }

        /// The fields it was read from, for the state file (`init?(time:fields:)` reads them back).
        var fields: [String: String] {
            var fields = ["dependency": dependency, "chain": ChainFields.chain(chain)]
            if let slowest { fields["slowest"] = slowest }
            if let durationMicros { fields["duration_usec"] = "\(durationMicros)" }
            if let thresholdMicros { fields["threshold_usec"] = "\(thresholdMicros)" }
            if !times.isEmpty { fields["chain_usec"] = ChainFields.timesField(times) }
            return fields
        }

        var dependency: String { name(0) ?? "" }
        var slowest: String? { name(1).flatMap { $0.isEmpty ? nil : $0 } }
        /// From the outermost run; the slow dependency alone from an application before 0.3.
        var chain: [String] { names.split(separator: 0, omittingEmptySubsequences: false).dropFirst(2).dropLast().map { String(decoding: $0, as: UTF8.self) } }

        private func name(_ index: Int) -> String? {
            names.split(separator: 0, maxSplits: index + 1, omittingEmptySubsequences: false).dropFirst(index).first
                .map { String(decoding: $0, as: UTF8.self) }
        }

        /// The memory it holds: its two buffers' capacity, each with an allocation's overhead, and itself.
        var bytes: Int {
            names.capacity + times.capacity * MemoryLayout<(UInt64, UInt64)>.stride + 2 * Self.allocation + MemoryLayout<Slow>.stride
        }

        /// What the heap adds to an allocation: the array's header and malloc's own.
        static let allocation = 48
    }

    /// What one application's slow resolutions may hold: about 14 with names of usual lengths, one
    /// at the field limits (512 bytes each).
    static let bytesPerApp = 3_584
    /// Applications kept: as many as names can be bound, so a table full of one user's is impossible.
    static let maxApps = AppOwners.maxNames
    /// What they may hold together (56 MiB), besides the table's entries.
    static let maxBytes = bytesPerApp * maxApps
    /// The most the state file holds: the newest records that fit, whatever the application.
    static let maxFileBytes = StateFile.maxBytes - (64 << 10)
    static let fileName = "slow-chains.json"
    static let what = "the applications' last slow resolutions"

    private struct State: Sendable {
        var byApp: [String: [Slow]] = [:]
        /// Whether `byApp` changed since the last save.
        var changed = false
    }

    private let state = Locked(State())
    private let file: StateFile?

    /// Reads the records `file` kept (a blocking read: at startup); nil keeps them in memory only.
    init(file: StateFile? = nil) {
        self.file = file
        let kept = file?.load(consequence: "weave-health why knows no slow resolution from before this daemon", Self.parse)
        for (app, slow) in kept ?? [] { note(app, slow) }
        state.withLock { $0.changed = false }
    }

    /// Keeps `slow` as `app`'s latest, in place of the last of its dependency, and as many of its
    /// other dependencies' as fit beside it.
    func note(_ app: String, _ slow: Slow) {
        state.withLock { state in
            guard state.byApp[app] != nil || state.byApp.count < Self.maxApps else { return }
            var kept = state.byApp[app] ?? []
            kept.removeAll { $0.dependency == slow.dependency }
            kept.append(slow)
            var bytes = kept.reduce(0) { $0 + $1.bytes }
            while kept.count > 1, bytes > Self.bytesPerApp { bytes -= kept.removeFirst().bytes }
            state.byApp[app] = kept
            state.changed = true
        }
    }

    /// Forgets `app` (it left).
    func forget(_ app: String) {
        state.withLock { state in
            if state.byApp.removeValue(forKey: app) != nil { state.changed = true }
        }
    }

    /// `app`'s latest slow resolution whose chain runs through `dependency`.
    func last(_ app: String, through dependency: String) -> Slow? {
        state.withLock { $0.byApp[app]?.last { $0.dependency == dependency || $0.chain.contains(dependency) } }
    }

    /// What they hold, by `Slow.bytes`.
    var keptBytes: Int {
        state.withLock { $0.byApp.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.bytes } } }
    }

    /// How often the file is saved at most: it may hold 4 MiB, and slow resolutions can come at every round.
    static let saveInterval: Duration = .seconds(10)
    private let lastSave = Locked<ContinuousClock.Instant?>(nil)

    /// Saves the records when they changed since the last save, at most every `saveInterval`, on
    /// `blocking`'s threads.
    func persist(with blocking: BlockingCalls) async {
        let now = ContinuousClock.now
        let due = lastSave.withLock { last in
            guard last.map({ now - $0 >= Self.saveInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        await file?.saveChanges(of: state, changed: \.changed, with: blocking) { Self.render($0.byApp) }
    }

    /// `{"chains":[{"app":"orders","time":1764316800.25,"fields":{"dependency":"Report",…}},…]}`, oldest
    /// first: the newest records whose text fits in `maxFileBytes`.
    static func render(_ byApp: [String: [Slow]]) -> String {
        let newest = byApp.flatMap { app, records in records.map { (app, $0) } }.sorted { $0.1.time > $1.1.time }
        var entries: [String] = []
        var bytes = 0
        for (app, slow) in newest {
            let fields = slow.fields.sorted { $0.key < $1.key }.map { "\(JSONText.quoted($0.key)):\(JSONText.quoted($0.value))" }
            let entry = "{\"app\":\(JSONText.quoted(app)),\"time\":\(slow.time),\"fields\":{\(fields.joined(separator: ","))}}"
            guard bytes + entry.utf8.count + 1 <= maxFileBytes else { break }
            bytes += entry.utf8.count + 1
            entries.append(entry)
        }
        return "{\"chains\":[" + entries.reversed().joined(separator: ",") + "]}\n"
    }

    /// The records of a state file, oldest first; nil for anything but one `render` wrote.
    static func parse(_ bytes: [UInt8]) -> [(String, Slow)]? {
        guard case .array(let entries)? = JSONValue.parse(bytes)?["chains"] else { return nil }
        var records: [(String, Slow)] = []
        for entry in entries {
            guard let app = entry["app"]?.string, !app.isEmpty, let time = entry["time"]?.epochSeconds,
                  case .object(let members)? = entry["fields"] else { return nil }
            var fields: [String: String] = [:]
            for (key, value) in members {
                guard let text = value.string, fields.updateValue(text, forKey: key) == nil else { return nil }
            }
            guard let slow = Slow(time: time, fields: fields) else { return nil }
            records.append((app, slow))
        }
        return records
    }
}
