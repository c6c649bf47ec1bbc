import WeaveSupport

/// Configures `FeatureModule`s in dependency order, each one once per process.
public enum ModuleManager {
    private static let configured = Locked<Set<String>>([])

    /// Configures `modules` (and none twice), dependencies first. Throws `ModuleError` on a cycle,
    /// a missing dependency or a duplicate name, before configuring anything.
    public static func configureModules(_ modules: [any FeatureModule.Type]) async throws(ModuleError) {
        for module in try order(modules) {
            let isNew = configured.withLock { $0.insert(module.name).inserted }
            guard isNew else { continue }
            await module.configure()
            Container.current.instrumentation.log(.registration, .debug, "Configured module \(module.name)",
                                                  metadata: ["module": "\(module.name)"])
        }
    }

    /// Whether a module of this name has been configured.
    public static func isConfigured(_ name: String) -> Bool {
        configured.withLock { $0.contains(name) }
    }

    /// `modules` in an order where every module follows its dependencies (depth-first, stable).
    static func order(_ modules: [any FeatureModule.Type]) throws(ModuleError) -> [any FeatureModule.Type] {
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
                } else if !isConfigured(dependency) {
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
