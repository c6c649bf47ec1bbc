/// Why a resolve failed. Every case says which service and what to do about it.
public enum ResolutionError: Error, CustomStringConvertible {
    /// Nothing is registered under the key; `suggestions` lists registered keys with near names.
    case notRegistered(type: String, suggestions: [String])
    /// Factories resolve each other in a loop; `path` runs from the first service back to it, `A → B → A`.
    case cycle(path: [String])
    /// The factory threw, or could not run the way it was called.
    case factoryFailed(type: String, underlying: any Error)
    /// The registration takes a different argument (or none) than the resolve passed.
    case argumentMismatch(type: String, expected: String, actual: String)

    /// The service the error is about (for a cycle, the one that closed it).
    public var serviceName: String {
        switch self {
        case .notRegistered(let type, _), .factoryFailed(let type, _), .argumentMismatch(let type, _, _):
            return type
        case .cycle(let path):
            return path.last ?? ""
        }
    }

    /// The cases without their payloads; `rawValue` is stable for logs and metric labels.
    public enum Kind: String, Sendable, CaseIterable {
        case notRegistered = "not_registered"
        case cycle
        case factoryFailed = "factory_failed"
        case argumentMismatch = "argument_mismatch"
    }

    /// Which case this is.
    public var kind: Kind {
        switch self {
        case .notRegistered: return .notRegistered
        case .cycle: return .cycle
        case .factoryFailed: return .factoryFailed
        case .argumentMismatch: return .argumentMismatch
        }
    }

    public var description: String {
        switch self {
        case .notRegistered(let type, let suggestions):
            var text = "No registration for \(type). Register it with container.register(…) before resolving it"
            if !suggestions.isEmpty {
                text += "; did you mean \(suggestions.joined(separator: ", "))?"
            } else {
                text += "."
            }
            return text
        case .cycle(let path):
            return "Dependency cycle: \(path.joined(separator: " → ")). Break it by resolving one side lazily (a property wrapper or a closure)."
        case .factoryFailed(let type, let underlying):
            return "The factory of \(type) failed: \(underlying)"
        case .argumentMismatch(let type, let expected, let actual):
            return "\(type) is registered with \(expected) but was resolved with \(actual)."
        }
    }
}

/// Thrown (as the underlying error of `.factoryFailed`) when a registration cannot serve the kind of resolve asked for.
public enum RegistrationUsageError: Error, CustomStringConvertible {
    /// An async factory was resolved through a synchronous API.
    case asyncFactoryNeedsAwait(type: String)
    /// A `.weak` registration's factory made a value type, which nothing can hold weakly.
    case weakScopeNeedsClass(type: String)

    public var description: String {
        switch self {
        case .asyncFactoryNeedsAwait(let type):
            return "\(type) has an async factory; resolve it with `try await container.resolveAsync(\(type).self)`."
        case .weakScopeNeedsClass(let type):
            return "\(type) is registered with scope .weak but its factory made a value type; use .transient or .singleton."
        }
    }
}
