import Synchronization

/// The handlers of one kind of hook: each added with a `HookToken` that removes it. Whether there
/// are any is readable without the lock, so an event nobody listens to costs one load.
package final class HookList<Handler: Sendable>: Sendable {
    private let handlers = Locked<(nextID: Int, byID: [Int: Handler])>((0, [:]))
    private let count = Atomic<Int>(0)

    package init() {}

    /// Adds `handler`; the token's `cancel()` removes it.
    package func add(_ handler: Handler) -> HookToken {
        let id = handlers.withLock { list in
            list.nextID += 1
            list.byID[list.nextID] = handler
            count.store(list.byID.count, ordering: .relaxed)
            return list.nextID
        }
        return HookToken { [self] in
            handlers.withLock { list in
                list.byID[id] = nil
                count.store(list.byID.count, ordering: .relaxed)
            }
        }
    }

    /// Whether no handler is installed.
    package var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// The handlers now, to call outside the lock.
    package var all: [Handler] { handlers.withLock { Array($0.byID.values) } }
}
