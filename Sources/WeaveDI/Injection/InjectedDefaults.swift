/// Each `InjectedKey`'s default (`liveValue` or `testValue`), computed once per process and read
/// without a lock from an `InsertOnlyMap` of key identities to boxed values (never released).
@usableFromInline
enum InjectedDefaults {
    @usableFromInline static let values = InsertOnlyMap()

    /// The default of `key` for the execution context, computed on first use.
    @inlinable
    static func value<K: InjectedKey>(for key: K.Type) -> K.Value {
        if let found = values.find(UInt(bitPattern: ObjectIdentifier(key))) { return unbox(found) }
        return computeValue(for: key)
    }

    /// The first read of `key`: its default, computed and stored.
    @usableFromInline @inline(never)
    static func computeValue<K: InjectedKey>(for key: K.Type) -> K.Value {
        // Computed outside the mutex: a key's default may read other keys. When two threads race,
        // the first stored wins and both return it.
        let value = ExecutionContext.current == .test ? K.testValue : K.liveValue
        let stored = values.findOrInsert(UInt(bitPattern: ObjectIdentifier(key))) {
            UnsafeRawPointer(Unmanaged.passRetained(InjectedBox(value)).toOpaque())
        }
        return unbox(stored)
    }

    /// The value in a stored box (boxes are never released, so it is read unretained).
    @inlinable
    static func unbox<Value>(_ box: UnsafeRawPointer) -> Value {
        Unmanaged<InjectedBox<Value>>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.value }
    }
}
