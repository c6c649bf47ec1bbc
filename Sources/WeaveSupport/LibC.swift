// The C library, for every module that imports WeaveSupport: one preamble instead of one per file.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#elseif canImport(Darwin)
@_exported import Darwin
#endif

/// The C library's words for an error number.
package enum SystemError {
    /// `strerror(code)`: "No such file or directory", "Connection refused".
    package static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
