/// Turns a container's factory runs into spans (`WeaveTracing` does it with swift-distributed-tracing):
/// told when each run starts, with the span of the run it is nested in, and when it ends. Resolves
/// that return a held instance run no factory and are not seen. Installed on a container with
/// `Container.traceFactoryRuns(with:)`; without one, a factory run pays one atomic load.
public protocol FactoryRunTracing: Sendable {
    /// A factory run of `dependency` starts: `path` names the runs it is nested in on its thread,
    /// outermost first, and `parent` is the span of the innermost of them, when it has one. Nil leaves
    /// the run untraced (outside a traced task, say).
    func started(dependency: String, scope: Scope, path: [String], parent: (any FactoryRunSpan)?) -> (any FactoryRunSpan)?
}

/// One traced factory run.
public protocol FactoryRunSpan: Sendable {
    /// The run ended: `selfTime` is its time without the runs nested in it (for an async run, the
    /// runs it awaited; nil when its container does not time resolves, or the factory threw);
    /// `error`, what its factory threw.
    func ended(selfTime: Duration?, error: (any Error)?)
    /// Runs an async factory with this span as the task's current one, so the factory runs it
    /// awaits are nested in it.
    func current<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T
}

/// The tracing a container was given, in one reference, for the container's atomic slot.
final class FactoryRunTracer: Sendable {
    let tracing: any FactoryRunTracing

    init(_ tracing: any FactoryRunTracing) {
        self.tracing = tracing
    }
}
