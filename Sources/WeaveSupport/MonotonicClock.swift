/// Nanosecond readings of CLOCK_MONOTONIC, for durations; never the wall clock. (Public only so that
/// WeaveDI's inlinable resolve path can use it; WeaveSupport is no product.)
public enum MonotonicClock {
    @inlinable
    public static func nanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}

/// Seconds since the Unix epoch from CLOCK_REALTIME, for timestamps people read (never for durations).
public enum WallClock {
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
