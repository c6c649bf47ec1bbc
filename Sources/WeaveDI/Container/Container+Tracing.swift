import Synchronization
extension Container {
    /// Makes this container's factory runs spans through `tracing` (`FactoryRunTracing`; `WeaveTracing`
    /// gives one for swift-distributed-tracing). False, and nothing changes, when it has one already.
    @discardableResult
    public func traceFactoryRuns(with tracing: some FactoryRunTracing) -> Bool {
        let tracer = Unmanaged.passRetained(FactoryRunTracer(tracing))
        let stored = runTracer.compareExchange(expected: nil, desired: UnsafeRawPointer(tracer.toOpaque()), ordering: .acquiringAndReleasing)
        if !stored.exchanged { tracer.release() }
        return stored.exchanged
    }

    /// Whether this container's factory runs are traced.
    public var tracesFactoryRuns: Bool { runTracer.load(ordering: .acquiring) != nil }

    /// The tracing it was given, if any.
    var runTracing: (any FactoryRunTracing)? {
        runTracer.load(ordering: .acquiring).map { Unmanaged<FactoryRunTracer>.fromOpaque($0).takeUnretainedValue().tracing }
    }

    /// The most names of a span's `path` (a recursion through a cycle can be 1,000 runs deep).
    static let maxSpanPath = 32

    /// Starts the span of the run on top of `frame`'s stack, kept in the frame (the parent of the
    /// runs nested in it) until `endSpan`; false when the run is not traced. Out of line and of
    /// concrete types only: the generic resolve paths that call it need no metadata for it.
    @usableFromInline
    func startSpan(_ tracer: UnsafeRawPointer, _ registration: AnyRegistration, frame: UnsafeMutablePointer<ThreadFrame>) -> Bool {
        let tracer = Unmanaged<FactoryRunTracer>.fromOpaque(tracer).takeUnretainedValue()
        let level = frame.pointee.depth - 1
        let path = frame.pointee.registrations.prefix(min(level, Self.maxSpanPath)).map(\.key.description)
        let span = tracer.tracing.started(dependency: registration.key.description, scope: registration.scope, path: path,
                                          parent: level > 0 ? frame.pointee.span(at: level - 1) : nil)
        frame.pointee.setSpan(span, at: level)
        return span != nil
    }

    /// Ends the span of the run on top of `frame`'s stack, whose self time was `own` nanoseconds.
    @usableFromInline
    func endSpan(own: UInt64?, error: (any Error)?, frame: UnsafeMutablePointer<ThreadFrame>) {
        let level = frame.pointee.depth - 1
        let span = frame.pointee.span(at: level)
        frame.pointee.setSpan(nil, at: level)
        span?.ended(selfTime: own.map { .nanoseconds(Int64($0)) }, error: error)
    }
}
