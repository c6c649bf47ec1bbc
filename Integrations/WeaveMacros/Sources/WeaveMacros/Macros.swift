@_exported import WeaveDI

/// Makes a struct a component: its `@Provide` members are registered together by the generated
/// `static func registerAll(into:)`, in dependency order, each with the scope it declares.
///
///     @Component
///     struct AppComponent {
///         @Provide(scope: .singleton) var database: Database { PostgresDatabase() }
///         @Provide func repository(database: Database) -> UserRepository { PostgresRepository(database) }
///     }
///     AppComponent.registerAll()                 // into Container.current
///
/// A function's parameters are its dependencies, resolved from the container when the factory
/// runs. The compiler reports a parameter type no `@Provide` of the component provides, and a cycle
/// (`A → B → A`), at the declaration. The component must have an `init()` (a struct without stored
/// properties has one): each factory calls its member on a new value.
@attached(member, names: named(registerAll))
public macro Component() = #externalMacro(module: "WeaveMacrosPlugin", type: "ComponentMacro")

/// Marks a member of a `@Component` as the provider of its type, with the scope its registration
/// has (`.transient` unless given). A computed `var` provides its type; a `func` its return type.
@attached(peer)
public macro Provide(scope: Scope = .transient) = #externalMacro(module: "WeaveMacrosPlugin", type: "ProvideMacro")
