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

/// The hash a registration is filed under in `RegistryTable`: the type's identity, mixed with the
/// name's bytes for a named key. Cheaper than `Hasher` (SipHash), which a named resolve would
/// otherwise pay on every call; the table only needs a good spread, not resistance to chosen keys,
/// since the keys are types and names in the program's own source.
@usableFromInline
enum KeyHash {
    /// The hash of the type's default (unnamed) registration.
    @inlinable @inline(__always)
    static func of(_ id: ObjectIdentifier) -> UInt64 {
        UInt64(UInt(bitPattern: Int(bitPattern: id))) &* 0x9E37_79B9_7F4A_7C15
    }

    /// The hash of the type's registration under `name` (`nil`: its default registration).
    @inlinable @inline(__always)
    static func of(_ id: ObjectIdentifier, name: String?) -> UInt64 {
        guard let name else { return of(id) }
        return of(id) ^ (name.utf8.withContiguousStorageIfAvailable { bytes(UnsafeRawBufferPointer($0)) }
            ?? Array(name.utf8).withUnsafeBytes(bytes))
    }

    /// Eight bytes at a time, each word folded in with a multiply and a shift; then a final mix, so
    /// that the high bits the table indexes with depend on every byte.
    @inlinable
    static func bytes(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
        var offset = 0
        while offset &+ 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            hash ^= hash >> 29
            offset &+= 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift &+= 8
            offset &+= 1
        }
        hash = (hash ^ tail) &* 0x9E37_79B9_7F4A_7C15
        hash ^= hash >> 32
        hash &*= 0xD6E8_FEB8_6659_FD93
        return hash ^ (hash >> 32)
    }
}
