/// A unit of configuration: it registers its services, after the modules it depends on.
public protocol FeatureModule {
    /// A unique name, used in `dependencies()` of other modules.
    static var name: String { get }
    /// Names of the modules that must be configured first.
    static func dependencies() -> [String]
    /// Registers the module's services.
    static func configure() async
}

extension FeatureModule {
    public static func dependencies() -> [String] { [] }
}

/// Why modules could not be configured.
public enum ModuleError: Error, Equatable, CustomStringConvertible {
    /// Modules depend on each other in a loop; the path runs back to its start.
    case cycle([String])
    /// A module depends on one that is neither given nor configured earlier.
    case missingDependency(module: String, dependency: String)
    /// Two different modules share a name.
    case duplicateName(String)

    public var description: String {
        switch self {
        case .cycle(let path):
            return "Module dependency cycle: \(path.joined(separator: " → "))"
        case .missingDependency(let module, let dependency):
            return "Module \(module) depends on \(dependency), which is not among the modules given; add \(dependency) to configureModules."
        case .duplicateName(let name):
            return "Two modules are named \(name); module names must be unique."
        }
    }
}
