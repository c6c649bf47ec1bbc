import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Component`: generates `registerAll(into:)`, which registers the component's `@Provide`
/// members in dependency order with their declared scopes; reports a dependency that no member
/// provides, a type provided twice, and a cycle, at their declarations.
public struct ComponentMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let component = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ComponentDiagnostic.notAStruct))
            return []
        }
        let providers = declaration.memberBlock.members.compactMap { Provider(member: $0.decl, in: context) }
        guard let order = DependencyOrder(providers: providers, component: component.name.text, in: context).sorted else {
            return [] // diagnosed
        }
        let access = component.modifiers.contains { $0.name.tokenKind == .keyword(.public) } ? "public " : ""
        let registrations = order.map { provider in
            "    container.register((\(provider.type)).self, scope: \(provider.scope)) { \(provider.factory) }"
        }
        return ["""
            /// Registers every `@Provide` of this component in `container` (the current one unless
            /// given), dependencies first, each with its declared scope.
            \(raw: access)static func registerAll(into container: WeaveDI.Container = .current) {
            \(raw: registrations.joined(separator: "\n"))
            }
            """]
    }
}

/// `@Provide`: a marker that `@Component` reads; it checks only that it marks a `var` with a type
/// or a `func` with a return type.
public struct ProvideMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if let variable = declaration.as(VariableDeclSyntax.self) {
            if variable.bindings.first?.typeAnnotation == nil {
                context.diagnose(Diagnostic(node: variable, message: ComponentDiagnostic.untypedVariable))
            }
        } else if let function = declaration.as(FunctionDeclSyntax.self) {
            if function.signature.returnClause == nil {
                context.diagnose(Diagnostic(node: function.name, message: ComponentDiagnostic.noReturnType(function.name.text)))
            }
        } else {
            context.diagnose(Diagnostic(node: node, message: ComponentDiagnostic.notAProvider))
        }
        return []
    }
}

/// One `@Provide` member: what it provides, with which scope, and what it needs.
struct Provider {
    struct Dependency {
        let label: String?
        let type: String
        let node: Syntax
    }

    let name: String
    let type: String
    let scope: String
    let dependencies: [Dependency]
    let isFunction: Bool
    let node: Syntax

    init?(member: DeclSyntax, in context: some MacroExpansionContext) {
        let attributes: AttributeListSyntax
        if let variable = member.as(VariableDeclSyntax.self) {
            attributes = variable.attributes
        } else if let function = member.as(FunctionDeclSyntax.self) {
            attributes = function.attributes
        } else {
            return nil
        }
        guard let attribute = attributes.lazy.compactMap({ $0.as(AttributeSyntax.self) })
            .first(where: { $0.attributeName.trimmedDescription == "Provide" }) else { return nil }
        var scope = ".transient"
        if case .argumentList(let arguments) = attribute.arguments,
           let given = arguments.first(where: { $0.label?.text == "scope" }) {
            scope = given.expression.trimmedDescription
        }
        self.scope = scope
        node = Syntax(member)
        if let variable = member.as(VariableDeclSyntax.self) {
            guard let binding = variable.bindings.first, let type = binding.typeAnnotation?.type,
                  let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { return nil } // @Provide diagnoses
            name = pattern.identifier.text
            self.type = Self.normalized(type)
            dependencies = []
            isFunction = false
        } else if let function = member.as(FunctionDeclSyntax.self), let returned = function.signature.returnClause?.type {
            name = function.name.text
            type = Self.normalized(returned)
            dependencies = function.signature.parameterClause.parameters.map { parameter in
                let label = parameter.firstName.tokenKind == .wildcard ? nil : parameter.firstName.text
                return Dependency(label: label, type: Self.normalized(parameter.type), node: Syntax(parameter))
            }
            isFunction = true
        } else {
            return nil
        }
    }

    /// The factory's body: the member read on a new component, each dependency resolved.
    var factory: String {
        guard isFunction else { return "Self().\(name)" }
        let arguments = dependencies.map { dependency in
            (dependency.label.map { "\($0): " } ?? "") + "container.requireResolve((\(dependency.type)).self)"
        }
        return "[unowned container] in Self().\(name)(\(arguments.joined(separator: ", ")))"
    }

    /// A type as written, without surrounding trivia.
    static func normalized(_ type: TypeSyntax) -> String {
        type.trimmedDescription
    }
}

/// The providers in registration order (each after what it depends on), or nil after diagnosing
/// a missing provider, a type provided twice, or a cycle.
struct DependencyOrder {
    let sorted: [Provider]?

    init(providers: [Provider], component: String, in context: some MacroExpansionContext) {
        var byType: [String: Int] = [:]
        var valid = true
        for (index, provider) in providers.enumerated() {
            if byType[provider.type] != nil {
                context.diagnose(Diagnostic(node: provider.node, message: ComponentDiagnostic.providedTwice(provider.type, component)))
                valid = false
            } else {
                byType[provider.type] = index
            }
        }
        for provider in providers {
            for dependency in provider.dependencies where byType[dependency.type] == nil {
                context.diagnose(Diagnostic(node: dependency.node,
                                            message: ComponentDiagnostic.missingProvider(dependency.type, provider.name, component)))
                valid = false
            }
        }
        guard valid else {
            sorted = nil
            return
        }
        // Depth-first, in declaration order; a provider met again while on the path is a cycle.
        var state = [Int: Bool]() // false: on the path; true: done
        var order: [Provider] = []
        var path: [Int] = []
        func visit(_ index: Int) -> [Int]? {
            if state[index] == true { return nil }
            if state[index] == false { return Array(path[path.firstIndex(of: index)!...]) + [index] }
            state[index] = false
            path.append(index)
            for dependency in providers[index].dependencies {
                if let cycle = visit(byType[dependency.type]!) { return cycle }
            }
            path.removeLast()
            state[index] = true
            order.append(providers[index])
            return nil
        }
        for index in providers.indices {
            if let cycle = visit(index) {
                let names = cycle.map { providers[$0].type }
                context.diagnose(Diagnostic(node: providers[cycle[0]].node, message: ComponentDiagnostic.cycle(names, component)))
                sorted = nil
                return
            }
        }
        sorted = order
    }
}

/// What the macros report, each with what to do about it.
enum ComponentDiagnostic: DiagnosticMessage {
    case notAStruct
    case notAProvider
    case untypedVariable
    case noReturnType(String)
    case providedTwice(String, String)
    case missingProvider(String, String, String)
    case cycle([String], String)

    var message: String {
        switch self {
        case .notAStruct: "@Component applies to a struct"
        case .notAProvider: "@Provide marks a computed var or a func of a @Component"
        case .untypedVariable: "a @Provide var needs a type annotation: the type it provides"
        case .noReturnType(let name): "@Provide func \(name) needs a return type: the type it provides"
        case .providedTwice(let type, let component): "\(type) is provided twice in \(component); keep one @Provide for it"
        case .missingProvider(let type, let provider, let component):
            "no @Provide in \(component) provides \(type), which \(provider) needs; add one"
        case .cycle(let types, let component):
            "dependency cycle in \(component): \(types.joined(separator: " → ")); break it"
        }
    }

    var diagnosticID: MessageID {
        let id = switch self {
        case .notAStruct: "notAStruct"
        case .notAProvider: "notAProvider"
        case .untypedVariable: "untypedVariable"
        case .noReturnType: "noReturnType"
        case .providedTwice: "providedTwice"
        case .missingProvider: "missingProvider"
        case .cycle: "cycle"
        }
        return MessageID(domain: "WeaveMacros", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}
