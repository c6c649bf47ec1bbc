import Dependencies
import WeaveDI

extension DependencyValues {
    /// The value of an `InjectedKey` that is also a swift-dependencies key, read the way
    /// `@Injected` reads it, so `@Dependency` is served by WeaveDI's registrations and counted and
    /// timed by the container's instrumentation. Precedence: a `withInjectedValues` override, then a
    /// `withDependencies` override (set through this subscript), then the current container's
    /// registration of the key's value type, then the key's `liveValue` (`testValue` under tests).
    ///
    /// More specific than swift-dependencies' own subscript, so an accessor written as usual picks it
    /// in a file that imports WeaveDependencies:
    ///
    ///     extension DependencyValues {
    ///         var exchangeUseCase: any ExchangeUseCase {
    ///             get { self[ExchangeUseCaseKey.self] }
    ///             set { self[ExchangeUseCaseKey.self] = newValue }
    ///         }
    ///     }
    ///
    /// A value set here (`withDependencies { $0.exchangeUseCase = mock }`) also reaches
    /// `@Injected(\.exchangeUseCase)` and `InjectedValues` reads in the scope.
    public subscript<Key: InjectedKey & TestDependencyKey>(key: Key.Type) -> Key.Value {
        // Inlinable, so the container's resolve is specialized for the value type at the caller.
        @inlinable get {
            InjectedValues.current.value(for: key) {
                OverriddenKeys.shared.contains(Key.self) ? self[InjectedOverride<Key>.self]?.value : nil
            }
        }
        @inlinable set {
            DependencyOverrides.install()
            OverriddenKeys.shared.insert(Key.self)
            self[InjectedOverride<Key>.self] = InjectedOverride.Entry(value: newValue)
        }
    }

    /// `subscript(_:)` behind a key path, for `@Dependency(Key.self)` (a key path's subscript
    /// arguments must be Hashable; a metatype is not).
    subscript<Key: InjectedKey & TestDependencyKey>(injected key: InjectedKeyIdentity<Key>) -> Key.Value {
        self[Key.self]
    }
}

/// An `InjectedKey`'s identity as a Hashable value, for a key path through `DependencyValues`.
struct InjectedKeyIdentity<Key: InjectedKey>: Hashable, Sendable {}
