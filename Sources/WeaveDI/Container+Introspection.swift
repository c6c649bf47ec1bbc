/// What a container holds for one key.
public struct RegistrationInfo: Sendable, CustomStringConvertible {
    /// The registered key.
    public let key: RegistrationKey
    /// Its scope.
    public let scope: Scope
    /// How many times it was resolved since it was first registered.
    public let hitCount: UInt64
    /// Whether an instance is held right now (shared and weak scopes).
    public let isInstantiated: Bool

    public var description: String {
        "\(key) [\(scope)] hits=\(hitCount)\(isInstantiated ? " instantiated" : "")"
    }
}

extension Container {
    /// Every registration of this container (not its parent), sorted by key.
    public var registrations: [RegistrationInfo] {
        let listed = lock.withReadLock { _ in
            table.all.map { ($0.key, $0.scope, $0.index, $0.isInstantiated) }
        }
        // Each shard is locked on its own, so readers on other shards are never blocked.
        var hitsByIndex = [UInt64](repeating: 0, count: listed.map(\.2).max().map { $0 + 1 } ?? 0)
        lock.forEachShard { shard in
            for index in hitsByIndex.indices { hitsByIndex[index] &+= shard.counters.pointee.count(index) }
        }
        return listed.map { key, scope, index, instantiated in
            let hits = hitsByIndex[index]
            return RegistrationInfo(key: key, scope: scope, hitCount: hits, isInstantiated: instantiated)
        }.sorted { $0.key.description < $1.key.description }
    }

    /// The dependencies recorded so far as factories resolved other services.
    public func dependencyGraph() -> DependencyGraph {
        DependencyGraph(edges: edges.withLock { $0 })
    }
}
