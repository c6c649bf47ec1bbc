import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct WeaveMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [ComponentMacro.self, ProvideMacro.self]
}
