import WeaveSupport

/// The applications' last slow resolutions with their chains, as their `/events` said (whether or
/// not the journal's rate limit wrote them): what `weave-health why APP/DEPENDENCY` shows beside
/// the dependency's startup chain. Bounded: the last `perApp` of each of `maxApps` applications.
final class AppSlowChains: Sendable {
    /// One slow resolution, its fields as read (`logSafe`, cut).
    struct Slow: Sendable {
        /// Seconds since the Unix epoch.
        let time: Double
        let dependency: String
        let durationMicros: UInt64?
        let thresholdMicros: UInt64?
        /// From the outermost run; the slow dependency alone from an application before 0.3.
        let chain: [String]
        /// Each run's total and self time in microseconds, paired with `chain` when both have the same length.
        let times: [(total: UInt64, own: UInt64)]
        let slowest: String?

        /// Nil unless `fields` are a slow resolution's (`dependency` at least).
        init?(time: Double, fields: [String: String]) {
            guard let dependency = fields["dependency"] else { return nil }
            self.time = time
            self.dependency = dependency
            durationMicros = fields["duration_usec"].flatMap { UInt64($0) }
            thresholdMicros = fields["threshold_usec"].flatMap { UInt64($0) }
            chain = fields["chain"].map { $0.split(separator: " → ", omittingEmptySubsequences: false).map(String.init) } ?? [dependency]
            let times = (fields["chain_usec"] ?? "").split(separator: " ").compactMap { pair -> (total: UInt64, own: UInt64)? in
                let parts = pair.split(separator: "/")
                guard parts.count == 2, let total = UInt64(parts[0]), let own = UInt64(parts[1]) else { return nil }
                return (total, own)
            }
            self.times = times.count == chain.count ? times : []
            slowest = fields["slowest"]
        }
    }

    static let perApp = 32
    static let maxApps = AppEventJournal.maxApps
    private let byApp = Locked<[String: [Slow]]>([:])

    /// Keeps `slow` as `app`'s latest.
    func note(_ app: String, _ slow: Slow) {
        byApp.withLock { byApp in
            guard byApp[app] != nil || byApp.count < Self.maxApps else { return }
            var kept = byApp[app] ?? []
            if kept.count == Self.perApp { kept.removeFirst() }
            kept.append(slow)
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
}
