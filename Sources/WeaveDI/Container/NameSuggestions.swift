/// Registered names close to a missing one, for "did you mean" hints.
enum NameSuggestions {
    /// Up to `limit` candidates nearest to `name`, by case-insensitive edit distance or containment.
    static func nearest(to name: String, among candidates: [String], limit: Int = 3) -> [String] {
        let target = Array(name.lowercased())
        let allowed = max(2, target.count / 3)
        var scored: [(distance: Int, name: String)] = []
        for candidate in Set(candidates) where candidate != name {
            let lowered = candidate.lowercased()
            let distance = editDistance(target, Array(lowered))
            if distance <= allowed || lowered.contains(String(target)) || String(target).contains(lowered) {
                scored.append((distance, candidate))
            }
        }
        scored.sort { $0.distance != $1.distance ? $0.distance < $1.distance : $0.name < $1.name }
        return scored.prefix(limit).map(\.name)
    }

    /// Levenshtein distance between two character arrays.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
