import Synchronization

// What a resolve records once it is done, out of line: its timing and report, its count, its
// errors, and its pin's release.
extension Container {
    /// Records a factory run of `registration` that began at `start` (an `IntervalClock` reading):
    /// makes its `FactoryRun` and hands it to each consumer. Its time goes in the factory-latency
    /// histogram, and its report when it passed the slow-resolution threshold: when it is long enough
    /// to be named in a chain, it is kept in its chain and reported when the outermost run ends
    /// (`ResolutionTrace`; an async run's in `asyncRun`'s trace, `AsyncResolutionTrace`). Its
    /// registration's first run is kept in the startup tree while startup lasts. `countResolution`:
    /// count the resolve too (the transient fast path counts it here, under the same lock).
    /// `pinned`: unpin `registration` here, under the same lock, or once its name is read when the
    /// run is reported. A synchronous run (no `asyncRun`) is the one on top of `frame`'s stack.
    /// Returns the run's self time, for its span.
    @usableFromInline @discardableResult
    func recordRun(
        _ registration: Unmanaged<AnyRegistration>, start: UInt64, frame: UnsafeMutablePointer<ThreadFrame>,
        countResolution: Bool, pinned: Bool = false, asyncRun: AsyncResolutionTrace.Run? = nil
    ) -> UInt64 {
        let end = clock.now()
        let total = clock.nanoseconds(end &- start)
        let run = if let asyncRun {
            FactoryRun(registration: registration, parent: nil, start: start, total: total,
                       selfTime: asyncRun.trace.selfTime(of: asyncRun, total: total))
        } else {
            FactoryRun(registration: registration, parent: frame.pointee.parent, start: start, total: total,
                       selfTime: frame.pointee.finishRun(nanos: total))
        }
        // What this takes once the run ended (the startup tree, the report, the observers) is the
        // nested resolve's time too, not its parent's own.
        func chargeParent() {
            if asyncRun == nil { frame.pointee.chargeParent(nanos: clock.nanoseconds(clock.now() &- end)) }
        }
        // A registration's first run only: later ones read a flag, and write nothing others read.
        let startsUp = startup.isOpen.load(ordering: .relaxed) && registration._withUnsafeGuaranteedRef { $0.offersFirstRunToStartup() }
        if startsUp { startup.record(run) }
        let threshold = slowThresholdNanos.load(ordering: .relaxed)
        let slow = total > threshold
        // Kept for chains: a synchronous run long enough to be named in one, and every async run (its
        // parent's self time is its total less the runs it awaited).
        let kept = total > threshold >> 3 || asyncRun != nil
        let reported = slow || kept || hasTimingObservers.load(ordering: .relaxed)
        let index = registration._withUnsafeGuaranteedRef { $0.index }
        lock.withReadLock(shard: frame.pointee.shard) { shard in
            if countResolution { shard.counters.pointee.countHit(index) }
            shard.counters.pointee.observe(nanos: total, histogram: StatsField.factoryLatency, index: index)
            shard.counters.pointee.add(1, at: StatsField.instancesCreated, index: index)
            if slow { shard.counters.pointee.add(1, at: StatsField.slowResolutions, index: index) }
            if pinned && !reported { shard.pins.pointee.unpin(registration) }
        }
        guard reported else {
            if startsUp { chargeParent() }
            return run.selfTime
        }
        let name = run.service
        if pinned { unpin(registration, frame) }
        let report = slow ? ResolutionTrace.Report(instrumentation: instrumentation, throttle: logThrottle, threshold: threshold) : nil
        let inChain = kept && (asyncRun.map { $0.trace.end($0, run, service: name, report: report) }
            ?? frame.pointee.keep(run, service: name, report: report))
        if !inChain, let report { reportAlone(name, total: total, selfTime: run.selfTime, report) }
        tellObservers(name, ranFactory: true, nanos: total)
        chargeParent()
        return run.selfTime
    }

    /// Records a timed cached hit (one in `hitSamplingInterval`) of the registration `slot`, pinned
    /// in `frame`'s shard since `start`: its time in the hit-latency histogram, its report when it
    /// passed the slow-resolution threshold (alone: a hit has no chain), and unpins it.
    @usableFromInline
    func recordHit(_ slot: Unmanaged<AnyRegistration>, start: UInt64, frame: UnsafeMutablePointer<ThreadFrame>) {
        let nanos = clock.nanoseconds(clock.now() &- start)
        let threshold = slowThresholdNanos.load(ordering: .relaxed)
        let slow = nanos > threshold
        let reported = slow || hasTimingObservers.load(ordering: .relaxed)
        let index = slot._withUnsafeGuaranteedRef { $0.index }
        lock.withReadLock(shard: frame.pointee.shard) { shard in
            shard.counters.pointee.observe(nanos: nanos, histogram: StatsField.hitLatency, index: index)
            if slow { shard.counters.pointee.add(1, at: StatsField.slowResolutions, index: index) }
            if !reported { shard.pins.pointee.unpin(slot) }
        }
        guard reported else { return }
        let name = slot._withUnsafeGuaranteedRef { $0.key.description }
        unpin(slot, frame)
        if slow {
            reportAlone(name, total: nanos, selfTime: nanos,
                        ResolutionTrace.Report(instrumentation: instrumentation, throttle: logThrottle, threshold: threshold))
        }
        tellObservers(name, ranFactory: false, nanos: nanos)
    }

    /// Reports a slow resolve that has no chain: a timed hit, or a run past what its trace keeps.
    private func reportAlone(_ name: String, total: UInt64, selfTime: UInt64, _ report: ResolutionTrace.Report) {
        let run = SlowResolution.Run(service: name, total: .nanoseconds(Int64(total)), selfTime: .nanoseconds(Int64(selfTime)))
        report.instrumentation.slow(SlowResolution(service: name, duration: run.total, threshold: .nanoseconds(Int64(report.threshold)),
                                                   chain: [run], position: 0),
                                    throttle: report.throttle)
    }

    /// Calls the timing observers (`MetricsBridge`) with a resolve's time.
    private func tellObservers(_ name: String, ranFactory: Bool, nanos: UInt64) {
        for observer in timingObservers.withLock({ Array($0.values) }) {
            observer(name, ranFactory, nanos)
        }
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
