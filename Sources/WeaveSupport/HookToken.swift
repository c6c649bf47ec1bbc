/// Returned by every hook registration; `cancel()` removes the handler. Dropping the token does not.
public final class HookToken: Sendable, Hashable {
    private let remove: @Sendable () -> Void

    package init(remove: @escaping @Sendable () -> Void) {
        self.remove = remove
    }

    /// Removes the handler; later events no longer reach it. Calling it twice is harmless.
    public func cancel() {
        remove()
    }

    public static func == (lhs: HookToken, rhs: HookToken) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
