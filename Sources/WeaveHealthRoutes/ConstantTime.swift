/// Comparison whose time does not depend on where the inputs differ (bearer tokens).
enum ConstantTime {
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        // The lengths are compared whole: lengths that differ by a multiple of 256 must not compare equal.
        var difference = a.count ^ b.count
        for index in 0..<max(a.count, b.count) {
            difference |= Int((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
        }
        return difference == 0
    }
}
