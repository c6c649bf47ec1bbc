/// Every live container, held weakly, so memory pressure can evict their `.cached` instances.
enum ContainerRegistry {
    private struct WeakContainer {
        weak var container: Container?
    }

    private static let containers = Locked<[WeakContainer]>([])

    static func add(_ container: Container) {
        containers.withLock { list in
            // Prune when the list doubles, so adding stays amortized O(1).
            if list.count >= 64 && list.count.nonzeroBitCount == 1 {
                list.removeAll { $0.container == nil }
            }
            list.append(WeakContainer(container: container))
        }
    }

    static var all: [Container] {
        containers.withLock { $0.compactMap(\.container) }
    }
}
