/// How long a container keeps what a factory made.
public enum Scope: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A new instance on every resolve.
    case transient
    /// Created lazily and exactly once, even when many threads race on the first resolve.
    case singleton
    /// Like `.singleton`, but dropped by `Container.evictCached()` (and on memory pressure).
    case cached
    /// Kept only while something else holds a strong reference; class types only.
    case weak

    public var description: String { rawValue }
}
