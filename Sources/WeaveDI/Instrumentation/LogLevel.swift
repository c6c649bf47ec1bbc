/// Which container events are logged.
public enum LogLevel: Int, Sendable, CaseIterable {
    /// Everything: registrations, resolution details, warnings and errors.
    case all
    /// Registrations, warnings and errors.
    case registration
    /// Warnings and errors.
    case warnings
    /// Errors only.
    case errors
    /// Nothing.
    case off
}
