/// The bridge from containers to `InjectedValues`: a key whose value type is registered (without a
/// name) in the current container reads that registration, so the hybrid pattern works, register
/// in the container and read through `@Injected(\.key)`.
@usableFromInline
enum ContainerValues {
    /// The current container's registration of `Value` (here or in an ancestor), resolved, or nil
    /// when it has none: a miss is not counted as a resolution error, as the key's default answers,
    /// and in a container without a parent it costs one lookup, as a hit does.
    /// `key` chooses which registration answers (`InjectedKey.registeredValue(in:)`): a key whose
    /// value is optional reads its wrapped type's.
    @inlinable @inline(__always)
    static func value<K: InjectedKey>(for key: K.Type) -> K.Value? {
        Container.withCurrent { K.registeredValue(in: $0) }
    }
}
