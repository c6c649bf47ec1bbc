
/// The lazily resolved value behind a property wrapper: resolved on first access from
/// `Container.current`, then kept. A resolve that yields `nil` is not kept, so a later access
/// can find a service registered since.
final class LazyResolution<Value>: Sendable {
    private let resolved = Locked<HandOff<Value>?>(nil)
    private let resolver: @Sendable (Container) -> Value?

    init(_ resolver: @escaping @Sendable (Container) -> Value?) {
        self.resolver = resolver
    }

    /// The kept value, or a fresh resolve (run with no lock held).
    func value() -> Value? {
        if let kept = resolved.withLock({ $0 }) { return kept.value }
        guard let value = resolver(Container.current) else { return nil }
        return resolved.withLock { kept in
            if let kept { return kept }
            kept = HandOff(value: value)
            return kept!
        }.value
    }
}
