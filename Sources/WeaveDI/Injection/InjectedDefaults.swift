/// Each `InjectedKey`'s default (`liveValue` or `testValue`), computed once per process and read
/// without a lock from an `InsertOnlyMap` of key identities to boxed values (never released).
@usableFromInline
enum InjectedDefaults {
    private static let values = InsertOnlyMap()

    /// The value in a stored box (boxes are never released, so it is read unretained).
    private static func unbox<Value>(_ box: UnsafeRawPointer) -> Value {
        Unmanaged<InjectedBox<Value>>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.value }
    }

    /// The default of `key` for the execution context, computed on first use.
    @usableFromInline
    static func value<K: InjectedKey>(for key: K.Type) -> K.Value {
        let id = UInt(bitPattern: ObjectIdentifier(key))
        if let found = values.find(id) { return unbox(found) }
        // Computed outside the mutex: a key's default may read other keys. When two threads race,
        // the first stored wins and both return it.
        let value = ExecutionContext.current == .test ? K.testValue : K.liveValue
        return unbox(values.findOrInsert(id) { UnsafeRawPointer(Unmanaged.passRetained(InjectedBox(value)).toOpaque()) })
    }
}
