import Logging
/// Configures `FeatureModule`s in dependency order, each one once per container: the current one
/// (`Container.current`), where a module's `configure()` registers. The container keeps which were
/// configured, so a test's container (`withContainer`) configures them afresh.
public enum ModuleManager {
    /// Configures `modules` (and none twice) in the current container, dependencies first. Throws
    /// `ModuleError` on a cycle, a missing dependency or a duplicate name, before configuring anything.
    public static func configureModules(_ modules: [any FeatureModule.Type]) async throws(ModuleError) {
        let container = Container.current
        for module in try order(modules, in: container) {
            let isNew = container.configuredModules.withLock { $0.insert(module.name).inserted }
            guard isNew else { continue }
            await module.configure()
            container.instrumentation.log(.registration, .debug, "Configured module \(module.name)",
                                          metadata: ["module": "\(module.name)"])
        }
    }

    /// Whether a module of this name has been configured in `container` (the current one by default).
    public static func isConfigured(_ name: String, in container: Container = .current) -> Bool {
        container.configuredModules.withLock { $0.contains(name) }
    }

    /// `modules` in an order where every module follows its dependencies (depth-first, stable).
    static func order(_ modules: [any FeatureModule.Type], in container: Container) throws(ModuleError) -> [any FeatureModule.Type] {
        var byName: [String: any FeatureModule.Type] = [:]
        for module in modules {
            if let existing = byName[module.name], existing != module { throw .duplicateName(module.name) }
            byName[module.name] = module
        }
        var ordered: [any FeatureModule.Type] = []
        var done: Set<String> = []
        var path: [String] = []

        func visit(_ module: any FeatureModule.Type) throws(ModuleError) {
            if done.contains(module.name) { return }
            if let start = path.firstIndex(of: module.name) {
                throw .cycle(Array(path[start...]) + [module.name])
            }
            path.append(module.name)
            for dependency in module.dependencies() {
                if let next = byName[dependency] {
                    try visit(next)
                } else if !isConfigured(dependency, in: container) {
                    throw .missingDependency(module: module.name, dependency: dependency)
                }
            }
            path.removeLast()
            done.insert(module.name)
            ordered.append(module)
        }

        for module in modules { try visit(module) }
        return ordered
    }
}
