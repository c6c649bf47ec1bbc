import Logging
import WeaveSupport
import WeaveSystemd

// Discovery: which applications are targets now, and which left, stopped or vanished.
extension AppFleet {
    /// The configured targets, then one per socket in the directory (a configured name wins, and a
    /// directory that cannot be listed keeps its last listing: `AppDirectory`).
    func targets() -> [AppTarget] {
        var targets = configuration.targets
        guard let directory else { return targets }
        var names = Set(targets.map(\.name))
        targets += directory.list().filter { names.insert($0.name).inserted }
        // Those whose socket is gone while their process has run on past the grace: down, and asked
        // no more (within the grace they keep their last state, unasked).
        targets += vanishedButRunning().filter { names.insert($0.name).inserted }
        // Those stopped while their unit stays enabled: down until they come back (`AppLifecycle`).
        targets += lifecycle.stoppedTargets().filter { names.insert($0.name).inserted }
        return targets.sorted { $0.name < $1.name }
    }

    /// The discovered applications whose socket has been gone for `leavingGrace` while the process
    /// that served it runs.
    private func vanishedButRunning() -> [AppTarget] {
        let now = clock.now
        return states.withLock { states in
            states.values.filter { $0.vanishedAt.map { now - $0 >= leavingGrace } ?? false }.map(\.target)
        }
    }

    static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// Whether the process `pid` still exists (it may be another user's: EPERM says it does).
    static func isRunning(_ pid: Int32?) -> Bool {
        guard let pid else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Whether a request may connect to `target`: a configured target, or a socket the last listing
    /// of the directory admitted (`AppOwners`: the name's owner). The one admission of every
    /// request to an application: a stopped application is a target by its name alone, and a
    /// socket another user put at its path is not its return (#64).
    func mayConnect(_ target: AppTarget) -> Bool {
        configuration.targets.contains { $0.name == target.name } || directory?.admits(target) == true
    }

    /// Why a stopped application is down, before what its unit says.
    static let stoppedReason = "it was stopped: its socket is gone and its unit is still enabled"

    /// Whether `target` is a discovered socket whose file is gone while the process that served it
    /// has ended too: a graceful stop removes the socket, then ends, so a request that failed
    /// meanwhile is its leaving (logged as such at the next listing), not its being down. A socket
    /// gone while its process runs on is not a leave (see `vanished`).
    func isLeaving(_ target: AppTarget) -> Bool {
        guard case .unix(let path) = target.address, !configuration.targets.contains(where: { $0.name == target.name }) else {
            return false
        }
        var status = stat()
        guard stat(path, &status) != 0 && errno == ENOENT else { return false }
        let (pid, vanishedAt) = states.withLock { ($0[target.name]?.pid, $0[target.name]?.vanishedAt) }
        return !Self.isRunning(pid) || vanishedAt.map { clock.now - $0 < leavingGrace } ?? true
    }

    /// Why `target` is down without asking it: its socket is gone and its process has run on for
    /// `leavingGrace` since (someone else removed the socket, or the application did without ending).
    func vanished(_ target: AppTarget) -> String? {
        guard let (pid, since) = states.withLock({ states in states[target.name].flatMap { state in state.vanishedAt.map { (state.pid, $0) } } }),
              clock.now - since >= leavingGrace, let pid else { return nil }
        return "its socket \(target.address) was removed, but the process that served it (pid \(pid)) still runs"
    }

    /// Forgets applications that are no longer targets (their socket is gone) and whose process has
    /// ended: they left, unless their systemd unit says otherwise (`AppLifecycle.verdict`): still
    /// enabled and inactive, they were stopped, and stay targets, down; starting or stopping, they
    /// are decided at a later round. Outside a systemd service, a socket of the same name back within
    /// `leavingGrace` is a restart, not a leave. One whose process still runs stays a target for
    /// `leavingGrace`, then is down.
    func forgetAllBut(_ names: [String]) async {
        let keep = Set(names)
        let now = clock.now
        let gone = states.withLock { states -> [(target: AppTarget, unit: String?)] in
            var gone: [(target: AppTarget, unit: String?)] = []
            for (name, state) in states {
                let socketThere = if case .unix(let path) = state.target.address { Self.exists(path) } else { true }
                let unit = state.target.unit ?? state.unit
                let entry = (state.target, unit)
                if keep.contains(name) {
                    // A target: one back within the grace, one kept for its vanished socket back, or ended at last.
                    if state.goneAt != nil { states[name]?.goneAt = nil }
                    guard state.vanishedAt != nil else { continue }
                    if socketThere { states[name]?.vanishedAt = nil } else if !Self.isRunning(state.pid) { gone.append(entry) }
                } else if !socketThere, Self.isRunning(state.pid) {
                    if state.vanishedAt == nil { states[name]?.vanishedAt = now }
                } else if !socketThere, unit?.hasSuffix(".service") != true, state.vanishedAt.map({ now - $0 < leavingGrace }) ?? true {
                    // Ended with its socket (a graceful stop removes it, then ends), and no unit to say
                    // whether it comes back: the grace, from when the socket went, does.
                    let since = state.goneAt ?? state.vanishedAt ?? now
                    states[name]?.goneAt = since
                    if now - since >= leavingGrace { gone.append(entry) }
                } else {
                    gone.append(entry) // no longer a target at all, or its unit decides
                }
            }
            return gone
        }
        var left: [String] = []
        for (target, unit) in gone {
            guard let unit, unit.hasSuffix(".service") else {
                left.append(target.name)
                continue
            }
            let status: SystemdUnit
            switch await SystemdUnit.read(unit, timeout: configuration.timeout, on: blocking) {
            case .success(let read):
                status = read
            case .failure(let failure) where !failure.reachedBus:
                // Not asked (another round is reading it, or the bus lane is full): no verdict, decided
                // at a later round. An unknown answer is not "left" (#66).
                continue
            case .failure:
                left.append(target.name)
                continue
            }
            switch AppLifecycle.verdict(status) {
            case .left:
                left.append(target.name)
            case .changing:
                continue
            case .stopped:
                var stopped = target
                stopped.unit = unit
                lifecycle.stop(stopped)
                let reason = Self.stoppedReason + "; " + status.summary
                states.withLock { $0[target.name]?.failing = ["/health": reason] }
                if lifecycle.announce(target.name, up: false) { logDown(stopped, reason: reason) }
            }
        }
        // Each logged once, by the call that removed it.
        let removed = states.withLock { states in left.filter { states.removeValue(forKey: $0) != nil } }
        for name in removed.sorted() {
            let admitted = events.admitLifecycle(name, .appLeft, level: .info, owner: owners.owner(of: name))
            events.forget(name)
            lifecycle.forget(name)
            if admitted {
                logger.info("Application \(name) left: its socket is gone and its process has ended",
                            metadata: WeaveEvent.appLeft.metadata(["app": "\(name)"]))
            }
        }
    }
}
