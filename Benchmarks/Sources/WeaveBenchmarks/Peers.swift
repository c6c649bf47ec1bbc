import Dependencies
import Swinject
import Synchronization
import WeaveDI

/// The service every container resolves.
final class Service: Sendable {
    let value: Int
    init(value: Int = 42) { self.value = value }
}

/// A value-type service: resolving it involves no reference counting.
struct ServiceValue: Sendable {
    let value: Int
}

private enum ServiceKey: DependencyKey {
    static let liveValue = Service()
}

extension DependencyValues {
    var benchService: Service {
        get { self[ServiceKey.self] }
        set { self[ServiceKey.self] = newValue }
    }
}

/// The simplest thread-safe registry: a Mutex around a dictionary of singletons.
final class MutexRegistry: Sendable {
    private let storage = Mutex<[ObjectIdentifier: any AnyObject & Sendable]>([:])
    func register<T: AnyObject & Sendable>(_ instance: T) { storage.withLock { $0[ObjectIdentifier(T.self)] = instance } }
    func resolve<T: AnyObject & Sendable>(_ type: T.Type) -> T? {
        storage.withLock { $0[ObjectIdentifier(type)] } as? T
    }
}

/// Swinject's containers are not Sendable; the benchmark only reads them after setup
/// (`synchronize()`d, or unsynchronized as Swinject's own docs allow for read-only use).
struct UncheckedBox<Value>: @unchecked Sendable { let value: Value }

enum Peers {
    static func weaveSingleton(instrumented: Bool) -> WeaveDI.Container {
        let container = WeaveDI.Container(instrumented: instrumented)
        container.register(Service.self, scope: .singleton) { Service() }
        return container
    }

    static func weaveTransient() -> WeaveDI.Container {
        let container = WeaveDI.Container()
        container.register(Service.self) { Service() }
        return container
    }

    static func swinject(_ scope: ObjectScope) -> Swinject.Container {
        let container = Swinject.Container()
        container.register(Service.self) { _ in Service() }.inObjectScope(scope)
        return container
    }

    static func mutexRegistry() -> MutexRegistry {
        let registry = MutexRegistry()
        registry.register(Service())
        return registry
    }
}
