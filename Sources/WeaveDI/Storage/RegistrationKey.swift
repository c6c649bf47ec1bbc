/// Identifies one registration: a type, optionally qualified by a name.
public struct RegistrationKey: Hashable, Sendable, CustomStringConvertible {
    /// The registered type's identity.
    public let typeID: ObjectIdentifier
    /// The registration name, or `nil` for the type's default registration.
    public let name: String?
    /// The registered type's name, as `String(describing:)` prints it.
    public let typeName: String

    init<T>(_ type: T.Type, name: String?) {
        self.typeID = ObjectIdentifier(type)
        self.name = name
        self.typeName = String(describing: type)
    }

    /// `TypeName`, or `name (TypeName)` for a named registration.
    public var description: String {
        guard let name else { return typeName }
        return "\(name) (\(typeName))"
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.typeID == rhs.typeID && lhs.name == rhs.name
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(typeID)
        hasher.combine(name)
    }
}
