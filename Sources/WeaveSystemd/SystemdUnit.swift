import CSystemd
import WeaveSupport

/// A unit's state as the host's systemd reports it over D-Bus (sd-bus, libsystemd's client): what
/// `systemctl status` shows. Read with `SystemdUnit.status(of:timeout:)`.
public struct SystemdUnit: Sendable, Equatable {
    public let name: String
    /// `loaded`, `not-found`, `bad-setting`, `error` or `masked`.
    public let loadState: String
    /// `active`, `reloading`, `inactive`, `failed`, `activating` or `deactivating`.
    public let activeState: String
    /// The unit type's finer state: `running`, `exited`, `auto-restart`, `dead`, …
    public let subState: String
    /// A service's last result (`success`, `exit-code`, `signal`, `timeout`, …); nil for other unit types.
    public let result: String?
    /// How often systemd restarted the service (`Restart=`); nil for other unit types.
    public let restarts: UInt32?
    /// When the unit entered its current state, in seconds since the Unix epoch; nil if never.
    public let stateChangedAt: Double?
    /// Whether it starts at boot: `enabled`, `disabled`, `static`, `masked`, `linked`, …
    /// (`systemctl is-enabled`); nil when systemd did not say.
    public let unitFileState: String?

    public init(name: String, loadState: String, activeState: String, subState: String, result: String?, restarts: UInt32?,
                stateChangedAt: Double?, unitFileState: String? = nil) {
        self.name = name
        self.loadState = loadState
        self.activeState = activeState
        self.subState = subState
        self.result = result
        self.restarts = restarts
        self.stateChangedAt = stateChangedAt
        self.unitFileState = unitFileState
    }

    /// Whether `name` is a unit name with its type (`postgresql.service`, `backup.timer`).
    public static func isValidName(_ name: String) -> Bool {
        let types = [".service", ".socket", ".timer", ".mount", ".target", ".path", ".slice", ".scope", ".swap", ".device", ".automount"]
        return types.contains(where: name.hasSuffix) && !name.contains("/") && name.utf8.count <= 256
            && name.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }

    /// What `systemctl status` says of it in one line: `api.service is activating (auto-restart),
    /// last result exit-code, restarted 3 times`.
    public var summary: String {
        if loadState == "not-found" { return "\(name) does not exist (LoadState not-found)" }
        var text = "\(name) is \(activeState) (\(subState))"
        if let result, result != "success" { text += ", last result \(result)" }
        if let restarts, restarts > 0 { text += ", restarted \(restarts) time\(restarts == 1 ? "" : "s")" }
        return text
    }

    /// Why a unit could not be read: the bus, or systemd's answer, in words.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
        /// Whether the call reached the bus at all: false when it waited for a thread past its deadline.
        public let reachedBus: Bool

        public init(description: String, reachedBus: Bool = true) {
            self.description = description
            self.reachedBus = reachedBus
        }
    }

    /// Reads `unit` from the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`),
    /// each call within `timeout`. Blocking: call it off the event loop and Swift's pool.
    public static func status(of unit: String, timeout: Duration) throws(Failure) -> SystemdUnit {
        let bus = try openSystemBus(timeout: timeout)
        // Closed without flushing: every call here waited for its reply, so nothing is queued, and a
        // flush on a bus that never finished authenticating waits for sd-bus's own 90 s timeout.
        defer { sd_bus_close_unref(bus) }
        let path = try managerCall("LoadUnit", unit, on: bus)
        let unitInterface = "org.freedesktop.systemd1.Unit"
        let loadState = try string(bus, path, unitInterface, "LoadState")
        let activeState = try string(bus, path, unitInterface, "ActiveState")
        let subState = try string(bus, path, unitInterface, "SubState")
        let changed = try? trivial(bus, path, unitInterface, "StateChangeTimestamp", type: "t", as: UInt64.self)
        let fileState = try? string(bus, path, unitInterface, "UnitFileState")
        // Service-only properties: another unit type (a timer, a socket) has none.
        let isService = unit.hasSuffix(".service")
        let result = isService ? try? string(bus, path, "org.freedesktop.systemd1.Service", "Result") : nil
        let restarts = isService ? try? trivial(bus, path, "org.freedesktop.systemd1.Service", "NRestarts", type: "u", as: UInt32.self) : nil
        return SystemdUnit(name: unit, loadState: loadState, activeState: activeState, subState: subState, result: result,
                           restarts: restarts, stateChangedAt: changed.flatMap { $0 > 0 ? Double($0) / 1e6 : nil },
                           unitFileState: fileState.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The unit that owns process `pid` (`Manager.GetUnitByPID`, then the unit's `Id`): its service,
    /// or the scope of the session that started it. Blocking, like `status(of:timeout:)`.
    public static func unitName(ofProcess pid: Int32, timeout: Duration) throws(Failure) -> String {
        let bus = try openSystemBus(timeout: timeout)
        defer { sd_bus_close_unref(bus) }
        let path = try managerCall("GetUnitByPID", UInt32(bitPattern: pid), on: bus)
        return try string(bus, path, "org.freedesktop.systemd1.Unit", "Id")
    }

    private static func openSystemBus(timeout: Duration) throws(Failure) -> OpaquePointer {
        var bus: OpaquePointer?
        let opened = sd_bus_open_system(&bus)
        guard opened >= 0, let bus else { throw Failure(description: "cannot connect to the system bus: \(SystemError.text(-opened))") }
        sd_bus_set_method_call_timeout(bus, UInt64(max(1, timeout.totalSeconds * 1e6)))
        return bus
    }

    /// A call of systemd's `Manager` with one argument (a unit name or a process ID) that answers
    /// with a unit's object path. `LoadUnit` loads the unit to answer, so an unknown unit answers
    /// with `LoadState` `not-found` rather than an error.
    private static func managerCall(_ method: String, _ argument: any ManagerArgument, on bus: OpaquePointer) throws(Failure) -> String {
        var message: OpaquePointer?
        var reply: OpaquePointer?
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer {
            sd_bus_message_unref(message)
            sd_bus_message_unref(reply)
            sd_bus_error_free(&error)
        }
        var code = sd_bus_message_new_method_call(bus, &message, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                  "org.freedesktop.systemd1.Manager", method)
        guard code >= 0 else { throw Failure(description: "cannot make a D-Bus call: \(SystemError.text(-code))") }
        code = argument.append(to: message)
        guard code >= 0 else { throw Failure(description: "cannot make a D-Bus call: \(SystemError.text(-code))") }
        code = sd_bus_call(bus, message, 0, &error, &reply)
        guard code >= 0 else { throw failure("\(method)(\(argument))", code, error) }
        var path: UnsafePointer<CChar>?
        code = sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "o")), &path)
        guard code >= 0, let path else { throw Failure(description: "systemd's answer to \(method)(\(argument)) has no object path") }
        return String(cString: path)
    }

    private static func string(_ bus: OpaquePointer, _ path: String, _ interface: String, _ member: String) throws(Failure) -> String {
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        var value: UnsafeMutablePointer<CChar>?
        let code = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, interface, member, &error, &value)
        guard code >= 0, let value else { throw failure(member, code, error) }
        defer { free(value) }
        return String(cString: value)
    }

    private static func trivial<T: FixedWidthInteger>(_ bus: OpaquePointer, _ path: String, _ interface: String, _ member: String,
                                                      type: Unicode.Scalar, as _: T.Type) throws(Failure) -> T {
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        var value: T = 0
        let code = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, interface, member, &error,
                                               CChar(UInt8(ascii: type)), &value)
        guard code >= 0 else { throw failure(member, code, error) }
        return value
    }

    private static func failure(_ what: String, _ code: Int32, _ error: sd_bus_error) -> Failure {
        if let message = error.message { return Failure(description: "\(what): \(String(cString: message))") }
        return Failure(description: "\(what): \(SystemError.text(-code))")
    }
}

/// What `managerCall` sends: a unit name (`s`) or a process ID (`u`).
private protocol ManagerArgument: CustomStringConvertible {
    func append(to message: OpaquePointer?) -> Int32
}

extension String: ManagerArgument {
    fileprivate func append(to message: OpaquePointer?) -> Int32 {
        withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
    }
}

extension UInt32: ManagerArgument {
    fileprivate func append(to message: OpaquePointer?) -> Int32 {
        var value = self
        return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &value)
    }
}
