extension Duration {
    /// The duration in whole nanoseconds (saturating), for APIs that take integers.
    package var totalNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min : .max) : product &+ attoseconds / 1_000_000_000
    }

    /// The duration in whole nanoseconds, negative durations as zero, for clocks and thresholds.
    package var nonNegativeNanoseconds: UInt64 {
        UInt64(max(0, totalNanoseconds))
    }

    /// The duration in seconds, for metrics and logs.
    package var totalSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
