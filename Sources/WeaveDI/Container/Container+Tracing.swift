extension Container {
    /// Makes this container's factory runs spans through `tracing` (`FactoryRunTracing`; `WeaveTracing`
    /// gives one for swift-distributed-tracing). False, and nothing changes, when it has one already.
    @discardableResult
    public func traceFactoryRuns(with tracing: some FactoryRunTracing) -> Bool {
        let tracer = FactoryRunTracer(tracing)
        return runTracer.storeIfNil(tracer) === tracer
    }

    /// Whether this container's factory runs are traced.
    public var tracesFactoryRuns: Bool { runTracer.load() != nil }

    /// The most names of a span's `path` (a recursion through a cycle can be 1,000 runs deep).
    static let maxSpanPath = 32

    /// Starts the span of the run on top of `frame`'s stack, kept in the frame as the parent of the
    /// runs nested in it.
    @usableFromInline
    func startSpan(_ tracer: FactoryRunTracer, _ registration: AnyRegistration,
                   frame: UnsafeMutablePointer<ThreadFrame>) -> (any FactoryRunSpan)? {
        let level = frame.pointee.depth - 1
        let path = frame.pointee.registrations.prefix(min(level, Self.maxSpanPath)).map(\.key.description)
        let span = tracer.tracing.started(dependency: registration.key.description, scope: registration.scope, path: path,
                                          parent: level > 0 ? frame.pointee.span(at: level - 1) : nil)
        frame.pointee.setSpan(span, at: level)
        return span
    }

    /// Ends the span of the run on top of `frame`'s stack, whose self time was `own` nanoseconds.
    @usableFromInline
    func endSpan(_ span: any FactoryRunSpan, own: UInt64?, error: (any Error)?, frame: UnsafeMutablePointer<ThreadFrame>) {
        frame.pointee.setSpan(nil, at: frame.pointee.depth - 1)
        span.ended(selfTime: own.map { .nanoseconds(Int64($0)) }, error: error)
    }
}
