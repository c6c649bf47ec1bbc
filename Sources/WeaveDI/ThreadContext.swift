#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-thread state of the resolver: the registrations whose factories are running on this thread
/// (for cycle detection and the dependency graph). Cycles are therefore detected per thread, with no
/// global stack: two threads resolving the same type are not a cycle.
@usableFromInline
final class ThreadContext {
    /// Registrations whose synchronous factories are running on this thread, outermost first;
    /// unretained, as each is kept alive by the resolve that runs its factory.
    @usableFromInline var stack: [Unmanaged<AnyRegistration>] = []

    /// The calling thread's context, created on first use and freed when the thread exits.
    @inlinable
    static var current: ThreadContext {
        if let raw = pthread_getspecific(threadContextKey) {
            return Unmanaged<ThreadContext>.fromOpaque(raw).takeUnretainedValue()
        }
        return makeCurrent()
    }

    @usableFromInline
    static func makeCurrent() -> ThreadContext {
        let context = ThreadContext()
        pthread_setspecific(threadContextKey, Unmanaged.passRetained(context).toOpaque())
        return context
    }
}

@usableFromInline
let threadContextKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { raw in
        guard let raw else { return }
        Unmanaged<ThreadContext>.fromOpaque(raw).release()
    }
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
