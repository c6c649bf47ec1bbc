public import Tracing
public import WeaveDI

/// swift-distributed-tracing spans for a container's factory runs: each run inside a traced task
/// (one with a current `InstrumentationContext`, such as a request's span) becomes a span,
/// `resolve ReportBuilder`, under the request's span or under the run it is nested in, so Jaeger or
/// Tempo show the DI work inside a request. Attributes: `weave.dependency`, `weave.scope`,
/// `weave.path` (the runs it is nested in, `OrderService → ReportBuilder`) and `weave.self_time_us`;
/// a factory's error is recorded on its span. Resolves that return a held instance make no span.
public struct ResolutionSpans: FactoryRunTracing {
    private let tracer: any Tracer

    /// Spans of `tracer`.
    public init(tracer: any Tracer) {
        self.tracer = tracer
    }

    public func started(dependency: String, scope: Scope, path: [String], parent: (any FactoryRunSpan)?) -> (any FactoryRunSpan)? {
        // Outside a traced task, and under an untraced run, nothing is traced.
        guard let context = (parent as? RunSpan)?.span.context ?? InstrumentationContext.current else { return nil }
        let span = tracer.startSpan("resolve \(dependency)", context: context)
        span.attributes["weave.dependency"] = dependency
        span.attributes["weave.scope"] = "\(scope)"
        if !path.isEmpty { span.attributes["weave.path"] = path.joined(separator: " → ") }
        return RunSpan(span: span)
    }
}

/// A factory run's span.
private struct RunSpan: FactoryRunSpan {
    let span: any Span

    func ended(selfTime: Duration?, error: (any Error)?) {
        if let selfTime { span.attributes["weave.self_time_us"] = Int64(selfTime.components.seconds * 1_000_000
                                                                            + selfTime.components.attoseconds / 1_000_000_000_000) }
        if let error {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    func current<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await InstrumentationContext.$current.withValue(span.context) { try await body() }
    }
}

extension Container {
    /// Makes this container's factory runs spans of the tracer the process bootstrapped
    /// (`InstrumentationSystem.bootstrap`, with swift-otel say). False, and nothing traced, when none
    /// is bootstrapped (its tracer is a no-op) or the container traces already. An `AppEndpoint`
    /// calls it when it runs.
    @discardableResult
    public func traceFactoryRunsWithBootstrappedTracer() -> Bool {
        let tracer = InstrumentationSystem.tracer
        guard !(tracer is NoOpTracer) else { return false }
        return traceFactoryRuns(with: ResolutionSpans(tracer: tracer))
    }
}
