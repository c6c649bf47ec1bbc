import InMemoryTracing
import Tracing
import WeaveDI
import WeaveTracing

// Every public resolve path users take, each through the same `BenchmarkCase` closure as the
// unnamed singleton it is compared with. All rows are instrumented (counted, hits sampled for the
// histogram, factory runs timed).

/// A service made anew on every resolve.
final class Widget: Sendable {
    let value: Int
    init(value: Int = 7) { self.value = value }
}

/// An allocation the optimizer cannot move to the stack, as a factory's cannot be.
@inline(never) @_optimize(none)
func makeWidget(_ value: Int) -> Widget { Widget(value: value) }

/// Made from an argument: `resolve(Tagged.self, argument:)`.
final class Tagged: Sendable {
    let tag: Int
    init(tag: Int) { self.tag = tag }
}

private enum BenchServiceKey: InjectedKey {
    static let liveValue = Service()
}

/// A value type no container registers: a read falls through to the key's default.
final class Unregistered: Sendable {}

private enum UnregisteredKey: InjectedKey {
    static let liveValue = Unregistered()
}

extension InjectedValues {
    var benchService: Service {
        get { self[BenchServiceKey.self] }
        set { self[BenchServiceKey.self] = newValue }
    }
    var unregistered: Unregistered {
        get { self[UnregisteredKey.self] }
        set { self[UnregisteredKey.self] = newValue }
    }
}

/// The name the seeds use for a named registration: longer than a small string's 15 bytes.
let orderServiceName = "BasicOrderService"

/// One container with every kind of registration, installed as `Container.live` too, so that
/// `UnifiedDI` and the property wrappers resolve the same registrations.
let pathContainer: WeaveDI.Container = {
    let container = WeaveDI.Container()
    container.register(Service.self, scope: .singleton) { Service() }
    container.register(orderServiceName, Service.self, scope: .singleton) { Service(value: 1) }
    container.register(Widget.self) { Widget() }
    container.register(orderServiceName, Widget.self) { Widget(value: 2) }
    container.register(Tagged.self) { (tag: Int) in Tagged(tag: tag) }
    Container.live = container
    return container
}()

/// What a user writes without a property wrapper: resolve in the initializer.
final class PlainHolder {
    let service: Service?
    init() { service = pathContainer.resolve(Service.self) }
}

final class InjectHolder: @unchecked Sendable { // the wrapper's storage is a `var` never reassigned
    @Inject var service: Service?
}

final class InjectedHolder: @unchecked Sendable { // the wrapper's storage is a `var` never reassigned
    @Injected(\.benchService) var service
}

final class FactoryHolder: @unchecked Sendable { // the wrapper's storage is a `var` never reassigned
    @Factory var service: Service
}

/// A container whose factory runs are spans (`WeaveTracing`), and a request's span to resolve in.
let tracedContainer: WeaveDI.Container = {
    let container = WeaveDI.Container()
    container.register(Service.self, scope: .singleton) { Service() }
    container.traceFactoryRuns(with: ResolutionSpans(tracer: InMemoryTracer()))
    return container
}()
let requestSpan = InMemoryTracer().startSpan("GET /orders", context: .topLevel)

let overriddenService = Service(value: 3)
let pathOverride = WeaveDI.Container()

/// A call site in a function of its own, as in a request handler: nothing the resolve reads
/// (the type's metadata, the key's hash, the container) is hoisted out of a benchmark's loop.
@inline(never) func resolveServiceOnce(_ container: WeaveDI.Container) -> Service? {
    container.resolve(Service.self)
}

/// Rows compared with the unnamed singleton (at most 1.5× in the target).
let singletonPathCases = [
    BenchmarkCase(name: "container.resolve(Service.self)") { n in
        for _ in 0..<n { blackHole(pathContainer.resolve(Service.self)) }
    },
    BenchmarkCase(name: "container.resolve(Service.self), a call site in a function of its own") { n in
        for _ in 0..<n { blackHole(resolveServiceOnce(pathContainer)) }
    },
    BenchmarkCase(name: "container.resolve(Service.self), traced container, inside a request's span") { n in
        InstrumentationContext.$current.withValue(requestSpan.context) {
            for _ in 0..<n { blackHole(tracedContainer.resolve(Service.self)) }
        }
    },
    BenchmarkCase(name: "container.resolve(_:default:)") { n in
        for _ in 0..<n { blackHole(pathContainer.resolve(Service.self, default: overriddenService)) }
    },
    BenchmarkCase(name: "container.resolveThrows(_:)") { n in
        for _ in 0..<n { blackHole(try? pathContainer.resolveThrows(Service.self)) }
    },
    BenchmarkCase(name: "container.resolve(\"BasicOrderService\", Service.self)") { n in
        for _ in 0..<n { blackHole(pathContainer.resolve(orderServiceName, Service.self)) }
    },
    BenchmarkCase(name: "UnifiedDI.resolve(Service.self)") { n in
        for _ in 0..<n { blackHole(UnifiedDI.resolve(Service.self)) }
    },
    BenchmarkCase(name: "UnifiedDI.resolve(_:default:)") { n in
        for _ in 0..<n { blackHole(UnifiedDI.resolve(Service.self, default: overriddenService)) }
    },
    BenchmarkCase(name: "UnifiedDI.resolveThrows(_:)") { n in
        for _ in 0..<n { blackHole(try? UnifiedDI.resolveThrows(Service.self)) }
    },
    BenchmarkCase(name: "UnifiedDI.resolve(\"BasicOrderService\", Service.self)") { n in
        for _ in 0..<n { blackHole(UnifiedDI.resolve(orderServiceName, Service.self)) }
    },
    BenchmarkCase(name: "InjectedValues.current.benchService") { n in
        for _ in 0..<n { blackHole(InjectedValues.current.benchService) }
    },
    BenchmarkCase(name: "InjectedValues.current.unregistered (no container registers its type)") { n in
        for _ in 0..<n { blackHole(InjectedValues.current.unregistered) }
    },
    // The rows below change the process for good: once a task has set `InjectedValues` or
    // overridden the container, every read checks the task locals (tests do; servers rarely).
    BenchmarkCase(name: "InjectedValues.current.benchService, overridden in the task") { n in
        withInjectedValues({ $0.benchService = overriddenService }) {
            for _ in 0..<n { blackHole(InjectedValues.current.benchService) }
        }
    },
    BenchmarkCase(name: "Container.current.resolve inside withContainer") { n in
        withContainer(pathContainer) {
            for _ in 0..<n { blackHole(Container.current.resolve(Service.self)) }
        }
    },
    BenchmarkCase(name: "UnifiedDI.resolve(Service.self), once some task has used withContainer") { n in
        for _ in 0..<n { blackHole(UnifiedDI.resolve(Service.self)) }
    },
    BenchmarkCase(name: "InjectedValues.current.benchService, once some task has used both") { n in
        for _ in 0..<n { blackHole(InjectedValues.current.benchService) }
    },
]

// Holders are made by functions the optimizer cannot inline, so they live on the heap, as a view
// model or service that holds a wrapper does (a holder that never escapes would be stack-allocated).
@inline(never) func makePlainHolder() -> PlainHolder { PlainHolder() }
@inline(never) func makeInjectHolder() -> InjectHolder { InjectHolder() }
@inline(never) func makeInjectedHolder() -> InjectedHolder { InjectedHolder() }
@inline(never) func makeFactoryHolder() -> FactoryHolder { FactoryHolder() }

let keptInject = InjectHolder()
let keptInjected = InjectedHolder()
let keptFactory = FactoryHolder()

/// Property-wrapper rows: creating the object that holds the wrapper and reading it once, against
/// the same object resolving in its initializer.
let wrapperCases = [
    BenchmarkCase(name: "holder whose init calls container.resolve (reference)") { n in
        for _ in 0..<n { blackHole(makePlainHolder().service) }
    },
    BenchmarkCase(name: "@Inject: new holder, one read") { n in
        for _ in 0..<n { blackHole(makeInjectHolder().service) }
    },
    BenchmarkCase(name: "@Injected(\\.benchService): new holder, one read") { n in
        for _ in 0..<n { blackHole(makeInjectedHolder().service) }
    },
    BenchmarkCase(name: "@Factory: new holder, one read") { n in
        for _ in 0..<n { blackHole(makeFactoryHolder().service) }
    },
]

/// Reads of wrappers in a holder that lives on (the common case), against `container.resolve`.
let wrapperReadCases = [
    BenchmarkCase(name: "@Inject: read again (kept)") { n in
        for _ in 0..<n { blackHole(keptInject.service) }
    },
    BenchmarkCase(name: "@Injected(\\.benchService): read again (kept)") { n in
        for _ in 0..<n { blackHole(keptInjected.service) }
    },
    BenchmarkCase(name: "@Factory: read again (resolves each time)") { n in
        for _ in 0..<n { blackHole(keptFactory.service) }
    },
]

/// Transient rows: the factory allocates, so each is compared with the allocation alone (the issue's
/// target: at most allocation + 40 ns).
let transientPathCases = [
    BenchmarkCase(name: "allocation: Widget() on the heap") { n in
        for index in 0..<n { blackHole(makeWidget(index)) }
    },
    BenchmarkCase(name: "container.resolve(Widget.self), transient") { n in
        for _ in 0..<n { blackHole(pathContainer.resolve(Widget.self)) }
    },
    BenchmarkCase(name: "container.resolve(\"BasicOrderService\", Widget.self), transient") { n in
        for _ in 0..<n { blackHole(pathContainer.resolve(orderServiceName, Widget.self)) }
    },
    BenchmarkCase(name: "UnifiedDI.resolve(Widget.self), transient") { n in
        for _ in 0..<n { blackHole(UnifiedDI.resolve(Widget.self)) }
    },
    BenchmarkCase(name: "container.resolve(Tagged.self, argument: 5)") { n in
        for _ in 0..<n { blackHole(pathContainer.resolve(Tagged.self, argument: 5)) }
    },
]
