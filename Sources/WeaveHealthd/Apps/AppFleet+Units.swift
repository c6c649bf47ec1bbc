import Logging
import Synchronization
import WeaveSupport
import WeaveSystemd

// Units: which systemd unit runs each application (GetUnitByPID), and what systemd says of it.
extension AppFleet {
    /// Asks systemd which unit owns each application's process, for those served by a process not
    /// asked about yet (`/proc` may hide other users' processes, so over the bus), a few at a time,
    /// after the round's health is applied. An answer, or systemd's refusal, is kept until another
    /// process serves the socket; a call that found no thread free is tried again next round. The
    /// first failure is logged.
    func findUnits() async {
        let asking = states.withLock { states in
            states.values.compactMap { state -> (name: String, pid: Int32)? in
                // PID 1 made a socket-activated application's listener (SO_PEERCRED names whoever
                // called listen()): its unit, init.scope, is not the application's.
                guard let pid = state.pid, pid != 1, pid != state.unitAskedFor, state.target.unit == nil else { return nil }
                return (state.target.name, pid)
            }
        }
        let found = await withTaskGroup(of: (String, Int32, Result<String, SystemdUnit.Failure>).self) { group in
            var found: [(String, Int32, Result<String, SystemdUnit.Failure>)] = []
            for (index, app) in asking.enumerated() {
                if index >= Self.concurrentUnitLookups, let done = await group.next() { found.append(done) }
                group.addTask { [configuration, blocking] in
                    (app.name, app.pid, await SystemdUnit.unitName(ofProcess: app.pid, timeout: configuration.timeout, on: blocking))
                }
            }
            for await done in group { found.append(done) }
            return found
        }
        for (name, pid, result) in found {
            let notAsked = if case .failure(let failure) = result { !failure.reachedBus } else { false }
            states.withLock { states in
                guard states[name]?.pid == pid, !notAsked else { return }
                states[name]?.unitAskedFor = pid
                states[name]?.unit = try? result.get()
            }
            if case .failure(let failure) = result, !unitLookupLogged.exchange(true, ordering: .relaxed) {
                logger.info("Cannot ask systemd which unit runs application \(name) (pid \(pid)): \(failure); applications' units stay unknown",
                            metadata: ["app": "\(name)", "reason": "\(failure)"])
            }
        }
    }

    /// `GetUnitByPID` calls in flight at most (`BlockingCalls` has a few threads for every kind of call).
    static let concurrentUnitLookups = 4

    /// Each application's systemd unit, named by its target or found for its process.
    func units() -> [(app: String, unit: String)] {
        states.withLock { states in
            states.values.compactMap { state in (state.target.unit ?? state.unit).map { (state.target.name, $0) } }
        }.sorted { $0.app < $1.app }
    }

    /// A failure of a target that names its systemd unit, with what systemd says of the unit: an
    /// application down and its unit in `activating (auto-restart)` tell one story.
    func withUnitState(_ outcome: Result<Void, FetchFailure>, of target: AppTarget) async -> Result<Void, FetchFailure> {
        guard case .failure(let failure) = outcome,
              let unit = target.unit ?? states.withLock({ $0[target.name]?.unit }) else { return outcome }
        let state: String
        switch await SystemdUnit.read(unit, timeout: configuration.timeout, on: blocking) {
        case .success(let status):
            state = status.summary
            // A stopped application whose unit was started, disabled or removed: no longer kept as
            // a target, so that the next listing finds it back, or finds it gone and says it left.
            if lifecycle.isStopped(target.name), AppLifecycle.verdict(status) != .stopped { lifecycle.release(target.name) }
        case .failure(let error):
            state = "\(unit): \(error)"
        }
        return .failure(FetchFailure("\(failure.description); \(state)"))
    }
}

extension SystemdUnit {
    /// `status(of:timeout:)` on `blocking` (sd-bus blocks), for the check and for the applications
    /// that name their unit: one call per unit at a time, however long a bus takes to answer.
    static func read(_ unit: String, timeout: Duration, on blocking: BlockingCalls) async -> Result<SystemdUnit, Failure> {
        await ask("unit \(unit)", timeout: timeout, on: blocking) { () throws(Failure) in try status(of: unit, timeout: timeout) }
    }

    /// `unitName(ofProcess:timeout:)` on `blocking`: which unit runs an application's process.
    static func unitName(ofProcess pid: Int32, timeout: Duration, on blocking: BlockingCalls) async -> Result<String, Failure> {
        await ask("pid \(pid)", timeout: timeout, on: blocking) { () throws(Failure) in try unitName(ofProcess: pid, timeout: timeout) }
    }

    private static func ask<Value: Sendable>(_ key: String, timeout: Duration, on blocking: BlockingCalls,
                                             _ call: @escaping @Sendable () throws(Failure) -> Value) async -> Result<Value, Failure> {
        do {
            return try await blocking.run(key, lane: .bus, deadline: timeout) { () -> Result<Value, Failure> in
                do throws(Failure) { return .success(try call()) } catch { return .failure(error) }
            }
        } catch {
            return .failure(Failure(description: "systemd was not asked: \(error)", reachedBus: false))
        }
    }
}
