// The C library, for every module that imports WeaveSupport: one preamble instead of one per file.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#elseif canImport(Darwin)
@_exported import Darwin
#endif
