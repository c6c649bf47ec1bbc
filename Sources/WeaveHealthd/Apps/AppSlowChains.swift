import WeaveSupport

/// The applications' last slow resolutions with their chains, as their `/events` said (whether or
/// not the journal's rate limit wrote them): what `weave-health why APP/DEPENDENCY` shows beside
/// the dependency's startup chain.
///
/// Bounded by bytes, each application by its own: an application keeps its newest slow resolutions
/// that fit in `bytesPerApp` (its newest always, which fits at the field limits), for as many
/// applications as names can be bound (`AppOwners.maxNames`), so no application's chains take
/// another's room and the whole stays under `maxBytes` (#64: 32 per application, counted, were
/// ~90 kB each; 4,096 applications would have taken ~360 MB).
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
            let chain = fields["chain"].map { $0.split(separator: " → ", omittingEmptySubsequences: false).map(String.init) } ?? [dependency]
            let times = (fields["chain_usec"] ?? "").split(separator: " ").compactMap { pair -> (total: UInt64, own: UInt64)? in
                let parts = pair.split(separator: "/")
                guard parts.count == 2, let total = UInt64(parts[0]), let own = UInt64(parts[1]) else { return nil }
                return (total, own)
            }
            self.times = times.count == chain.count ? times : []
            let parts = [dependency, fields["slowest"] ?? ""] + chain
            var names: [UInt8] = []
            names.reserveCapacity(parts.reduce(0) { $0 + $1.utf8.count + 1 })
            for part in parts {
                names += part.utf8.lazy.filter { $0 != 0 }
                names.append(0)
            }
            self.names = names
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

    private let byApp = Locked<[String: [Slow]]>([:])

    /// Keeps `slow` as `app`'s latest, and as many of its earlier ones as fit beside it.
    func note(_ app: String, _ slow: Slow) {
        byApp.withLock { byApp in
            guard byApp[app] != nil || byApp.count < Self.maxApps else { return }
            var kept = byApp[app] ?? []
            kept.append(slow)
            var bytes = kept.reduce(0) { $0 + $1.bytes }
            while kept.count > 1, bytes > Self.bytesPerApp { bytes -= kept.removeFirst().bytes }
            byApp[app] = kept
        }
    }

    /// Forgets `app` (it left).
    func forget(_ app: String) {
        byApp.withLock { _ = $0.removeValue(forKey: app) }
    }

    /// `app`'s latest slow resolution whose chain runs through `dependency`.
    func last(_ app: String, through dependency: String) -> Slow? {
        byApp.withLock { $0[app]?.last { $0.dependency == dependency || $0.chain.contains(dependency) } }
    }

    /// What they hold, by `Slow.bytes`.
    var keptBytes: Int {
        byApp.withLock { $0.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.bytes } } }
    }
}
