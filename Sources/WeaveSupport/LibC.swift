// The C library, for every module that imports WeaveSupport: one preamble instead of one per file.
// The package is for Linux: futexes, PSI, /proc, SO_PEERCRED, libsystemd. It is built and tested on
// Debian 12 (glibc); elsewhere it stops here, with this message, rather than half way through.
#if !os(Linux)
#error("WeaveDI for Linux servers builds on Linux only")
#endif
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#endif

/// The C library's words for an error number.
package enum SystemError {
    /// `strerror(code)`: "No such file or directory", "Connection refused".
    package static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
