/// What every live container offers memory pressure (its `EvictionTarget`), held weakly, so
/// pressure can evict their `.cached` instances.
enum ContainerRegistry {
    private struct WeakTarget {
        weak var target: EvictionTarget?
    }

    private static let targets = Locked<[WeakTarget]>([])

    static func add(_ target: EvictionTarget) {
        targets.withLock { list in
            // Prune when the list doubles, so adding stays amortized O(1).
            if list.count >= 64 && list.count.nonzeroBitCount == 1 {
                list.removeAll { $0.target == nil }
            }
            list.append(WeakTarget(target: target))
        }
    }

    static var all: [EvictionTarget] {
        targets.withLock { $0.compactMap(\.target) }
    }
}
