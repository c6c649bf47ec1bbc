/// What one parse of another process's exposition may cost, so that no answer can make it run away:
/// labels per series (Prometheus's `label_limit`), samples in all (`sample_limit`), and a deadline.
/// Each is checked as the input is read, and ends the parse with the limit's name.
public struct ParseLimits: Sendable {
    /// Labels one series may have, those the caller adds excepted (128, as Prometheus's default
    /// `label_limit` for a scrape that sets one).
    public var labels: Int
    /// Samples in all (each bucket and each quantile counts, as in the text rendering); nil for no bound.
    public var samples: Int?
    /// When the parse gives up; nil for never.
    public var deadline: ContinuousClock.Instant?

    /// `labels` is taken as at most `Int16.max`.
    public init(labels: Int = 128, samples: Int? = nil, deadline: ContinuousClock.Instant? = nil) {
        self.labels = min(max(labels, 0), Int(Int16.max))
        self.samples = samples
        self.deadline = deadline
    }

    /// Why the deadline ended a parse.
    static let lateMessage = "reading it took longer than its time allowed"

    /// Whether the deadline is past.
    var isLate: Bool { deadline.map { ContinuousClock.now >= $0 } ?? false }

    func tooManyLabels() -> String { "a series has more than \(labels) labels (label_limit)" }
    func tooManySamples() -> String { "more than \(samples ?? 0) samples (sample_limit)" }
}
