import Dependencies
import WeaveDependencies
import WeaveDI

// The swift-dependencies bridge (Integrations/WeaveDependencies): `@Dependency` served by the
// container, and what an `InjectedValues` read costs once the bridge's source of overrides is
// installed. Run last (`bridge`): the installation lasts for the rest of the process.

private enum BridgedServiceKey: InjectedKey {
    static let liveValue = Service(value: 8)
}

extension BridgedServiceKey: DependencyKey {}

extension DependencyValues {
    var bridgedService: Service {
        get { self[BridgedServiceKey.self] }
        set { self[BridgedServiceKey.self] = newValue }
    }
}

extension InjectedValues {
    var bridgedService: Service {
        get { self[BridgedServiceKey.self] }
        set { self[BridgedServiceKey.self] = newValue }
    }
}

/// Rows compared with `container.resolve(Service.self)` (the first of `singletonPathCases`).
let bridgeCases = [
    BenchmarkCase(name: "@Dependency(\\.bridgedService), served by the container (WeaveDependencies)") { n in
        for _ in 0..<n {
            @Dependency(\.bridgedService) var service
            blackHole(service)
        }
    },
    BenchmarkCase(name: "DependencyValues._current.bridgedService, served by the container") { n in
        for _ in 0..<n { blackHole(DependencyValues._current.bridgedService) }
    },
    BenchmarkCase(name: "InjectedValues.current.benchService, the bridge's source installed (key never overridden)") { n in
        for _ in 0..<n { blackHole(InjectedValues.current.benchService) }
    },
    BenchmarkCase(name: "InjectedValues.current.bridgedService, the key overridden once (scope ended)") { n in
        for _ in 0..<n { blackHole(InjectedValues.current.bridgedService) }
    },
]

/// Installs the bridge's source of overrides, as the first `withDependencies` override does.
func installDependencyOverrides() {
    withDependencies { $0.bridgedService = Service(value: 9) } operation: {}
}
