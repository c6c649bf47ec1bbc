import Synchronization

// What a resolve records once it is done, out of line: its timing and report, its count, its
// errors, and its pin's release.
extension Container {
    /// Records the time since `start` (an `IntervalClock` reading) in a histogram of the
    /// registration at `index`, and reports it if it passed the slow-resolution threshold.
    /// `countResolution`: count the resolve too (the transient fast path counts it here, under the
    /// same lock). `pinned`: unpin `registration`, under the same lock, or after `service` is read
    /// when the timing is reported. `framed`: a factory run pushed on `frame`'s stack, whose self
    /// time is kept (and which, when it is long enough to be named in a chain, is kept in the
    /// frame's trace: its slow report waits for the outermost run's end, `ResolutionTrace`).
    /// `created`: a factory run of `registration`, its first kept in the startup tree while startup
    /// lasts (`asyncParent`: the async factory an async one ran in). `asyncRun`: an async factory
    /// run, kept in its outermost run's trace (`AsyncResolutionTrace`), its report waiting for that.
    /// Returns the run's self time (its total for a run not `framed`).
    @usableFromInline @discardableResult
    func recordTiming(
        index: Int, start: UInt64, histogram: Int, created: Bool = false, countResolution: Bool = false,
        frame: UnsafeMutablePointer<ThreadFrame> = ThreadFrame.current, pinned: Bool = false, framed: Bool = false,
        registration: Unmanaged<AnyRegistration>? = nil, asyncParent: RegistrationKey? = nil,
        asyncRun: AsyncResolutionTrace.Run? = nil, service: @autoclosure () -> String
    ) -> UInt64 {
        let end = clock.now()
        let nanos = clock.nanoseconds(end &- start)
        let threshold = slowThresholdNanos.load(ordering: .relaxed)
        let slow = nanos > threshold
        let own = framed ? frame.pointee.finishRun(nanos: nanos) : nanos
        // What this takes once the run ended (the startup tree, the report, the observers) is the
        // nested resolve's time too, not its parent's own.
        func chargeParent() {
            if framed { frame.pointee.chargeParent(nanos: clock.nanoseconds(clock.now() &- end)) }
        }
        // A registration's first run only: later ones read a flag, and write nothing others read.
        var startsUp = false
        if created, startup.isOpen.load(ordering: .relaxed), let registration {
            startsUp = registration._withUnsafeGuaranteedRef { $0.offersFirstRunToStartup() }
        }
        if startsUp {
            startup.record(.init(service: service(), parent: framed ? frame.pointee.parentName : asyncParent?.description,
                                 start: start, nanos: nanos, own: framed ? own : nil))
        }
        // Kept for chains: a synchronous run long enough to be named in one, and every async run (its
        // parent's self time is its total less the runs it awaited).
        let traced = (framed && nanos > threshold >> 3) || asyncRun != nil
        let reported = slow || traced || hasTimingObservers.load(ordering: .relaxed)
        lock.withReadLock(shard: frame.pointee.shard) { shard in
            if countResolution { shard.counters.pointee.countHit(index) }
            shard.counters.pointee.observe(nanos: nanos, histogram: histogram, index: index)
            if created { shard.counters.pointee.add(1, at: StatsField.instancesCreated, index: index) }
            if slow { shard.counters.pointee.add(1, at: StatsField.slowResolutions, index: index) }
            if pinned && !reported { shard.pins.pointee.unpin(registration.unsafelyUnwrapped) }
        }
        guard reported else {
            if startsUp { chargeParent() }
            return own
        }
        let name = service()
        if pinned { unpin(registration.unsafelyUnwrapped, frame) }
        let report = slow ? ResolutionTrace.Report(instrumentation: instrumentation, throttle: logThrottle, threshold: threshold) : nil
        let kept = traced && (asyncRun.map { $0.trace.end($0, service: name, total: nanos, report: report) }
            ?? frame.pointee.keep(name, total: nanos, own: own, report: report))
        if !kept, let report {
            // A timed hit, or a run past what the trace keeps: reported now, alone.
            let run = SlowResolution.Run(service: name, total: .nanoseconds(Int64(nanos)), selfTime: .nanoseconds(Int64(own)))
            report.instrumentation.slow(SlowResolution(service: name, duration: run.total, threshold: .nanoseconds(Int64(threshold)),
                                                       chain: [run], position: 0),
                                        throttle: report.throttle)
        }
        for observer in timingObservers.withLock({ Array($0.values) }) {
            observer(name, histogram == StatsField.factoryLatency, nanos)
        }
        chargeParent()
        return own
    }

    /// Counts `error` against the registration at `index` (or its key, when it is not registered),
    /// tells the error hooks about it unless it is a miss (those are reported by the optional APIs),
    /// and returns it for throwing.
    @usableFromInline
    func failed(_ error: ResolutionError, index: Int?) -> ResolutionError {
        let field = StatsField.errors + ResolutionError.Kind.allCases.firstIndex(of: error.kind)!
        if let index {
            lock.withReadLock { shard in shard.counters.pointee.add(1, at: field, index: index) }
        } else {
            let key = "\(error.serviceName)\u{0}\(error.kind.rawValue)"
            unregisteredErrors.withLock { counts in
                // Bounded: a program has finitely many types, but names could come from input.
                if counts[key] != nil || counts.count < 1_000 { counts[key, default: 0] += 1 }
            }
        }
        if error.kind != .notRegistered { instrumentation.error(service: error.serviceName, error: error, throttle: logThrottle) }
        return error
    }

    /// Counts one resolve of the registration at `index`, and unpins `unpinning`.
    @usableFromInline
    func countResolution(_ index: Int, unpinning: Unmanaged<AnyRegistration>? = nil,
                         frame: UnsafeMutablePointer<ThreadFrame> = ThreadFrame.current) {
        lock.withReadLock(shard: frame.pointee.shard) { shard in
            shard.counters.pointee.countHit(index)
            if let unpinning { shard.pins.pointee.unpin(unpinning) }
        }
    }

    /// Unpins a registration the thread pinned (`runPinned`, `resolveSampled`).
    @usableFromInline
    func unpin(_ slot: Unmanaged<AnyRegistration>, _ frame: UnsafeMutablePointer<ThreadFrame>) {
        lock.withReadLock(shard: frame.pointee.shard) { shard in shard.pins.pointee.unpin(slot) }
    }
}
