import Synchronization
package import WeaveSupport

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
        let listed = lock.withReadLock { _ in table.all.map { ($0.key, $0.scope, $0.isInstantiated) } }
        let statistics = statistics()
        let hits = Dictionary(statistics.services.map { ($0.service, $0.resolutions) }, uniquingKeysWith: +)
        return listed.map { key, scope, instantiated in
            RegistrationInfo(key: key, scope: scope, hitCount: hits[key.description] ?? 0, isInstantiated: instantiated)
        }.sorted { $0.key.description < $1.key.description }
    }

    /// The dependencies recorded so far as factories resolve other services.
    public func dependencyGraph() -> DependencyGraph {
        DependencyGraph(edges: edges.withLock { $0 })
    }
}

extension Container {
    /// The instances of this container's shared-scope services, by name (the registration name, else
    /// the type's name): those that exist, and those not made yet whose registered type `making`
    /// accepts, made now (async factories awaited). Reading them is not a resolve: it adds nothing to
    /// the resolve counts or latency histograms; making one counts as its creation only. Transient
    /// services are left out. For health monitors, which must not make what they do not check.
    /// `weak`: whether the instance is held weakly by the container (a caller that keeps it would
    /// keep it alive).
    package func sharedInstances(making: (Any.Type) -> Bool) async -> [(name: String, instance: Any, weak: Bool)] {
        let registrations = lock.withReadLock { _ in table.all }
        var instances: [(name: String, instance: Any, weak: Bool)] = []
        for registration in registrations {
            guard let instance = await registration.sharedInstance(in: self, making: making) else { continue }
            instances.append((registration.key.name ?? registration.key.typeName, instance, registration.scope == .weak))
        }
        return instances
    }

    /// Moves whenever what `sharedInstances` finds may have changed: a registration added, replaced
    /// or removed, a shared instance made, published or evicted (a weak instance that is released
    /// does not move it).
    package var sharedInstancesVersion: UInt64 { lock.writes.load(ordering: .acquiring) }

    /// Fired after each move of `sharedInstancesVersion`.
    package var sharedInstancesChanged: ChangeSignal { lock.written }
}
