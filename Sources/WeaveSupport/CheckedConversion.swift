extension BinaryInteger {
    /// `value` rounded toward zero when this type can hold it; nil when it is NaN, infinite or out of
    /// range. A number another process, a file or a request gave converts through this, or is
    /// range-checked before: `Int(1e300)` traps.
    package init?(checked value: Double) {
        guard let integer = Self(exactly: value.rounded(.towardZero)) else { return nil }
        self = integer
    }
}
