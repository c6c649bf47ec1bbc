/// The bridge from containers to `InjectedValues`: a key whose value type is registered (without a
/// name) in the current container reads that registration, so the hybrid pattern works, register
/// in the container and read through `@Injected(\.key)`.
@usableFromInline
enum ContainerValues {
    /// The current container's registration of `Value` (here or in an ancestor), resolved, or nil
    /// when it has none: a miss is not counted as a resolution error, as the key's default answers,
    /// and in a container without a parent it costs one lookup, as a hit does.
    /// A key whose value is optional (`static var liveValue: Service? { nil }`) reads the
    /// registration of the wrapped type, `Service`, as upstream's keys do.
    @inlinable @inline(__always)
    static func value<Value>(_ type: Value.Type) -> Value? {
        Container.withCurrent { container in
            if let registered = container.resolveQuietly(type) { return registered }
            return (type as? any InjectableOptional.Type)?.registeredWrapped(in: container) as? Value
        }
    }
}
