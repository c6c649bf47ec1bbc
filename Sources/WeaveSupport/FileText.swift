/// Why a file could not be read, in words.
package struct FileReadError: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}

/// A whole file as text, up to `limit` bytes (procfs and sysfs files included: they are read until
/// the end, whatever size they claim); the error says why not, with the errno text or the size.
package func readTextFile(_ path: String, limit: Int) -> Result<String, FileReadError> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(FileReadError(SystemError.text(errno))) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    // On the stack, and not zeroed: procfs files are read at every scrape.
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8_192) { buffer in
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(FileReadError(SystemError.text(errno)))
            }
            if count == 0 { break }
            bytes += UnsafeBufferPointer(rebasing: buffer[..<count])
            if bytes.count > limit { return .failure(FileReadError("larger than \(limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes")")) }
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }
}

/// A whole regular file of at most `limit` bytes, for files a configuration names (a CA bundle, a
/// token). Opened without blocking and checked before a byte is read: a FIFO, a device, a directory
/// or a socket is refused with what it is, so `open()` and `read()` never wait on a writer.
package func readRegularFile(_ path: String, limit: Int) -> Result<[UInt8], FileReadError> {
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(FileReadError(SystemError.text(errno))) }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else { return .failure(FileReadError(SystemError.text(errno))) }
    let kind: String? = switch status.st_mode & S_IFMT {
    case S_IFREG: nil
    case S_IFDIR: "a directory"
    case S_IFIFO: "a FIFO"
    case S_IFCHR, S_IFBLK: "a device"
    case S_IFSOCK: "a socket"
    default: "not a regular file"
    }
    if let kind { return .failure(FileReadError("it is \(kind), not a regular file")) }
    guard Int(status.st_size) <= limit else {
        return .failure(FileReadError("it is \(status.st_size) bytes, more than the \(limit) allowed"))
    }
    var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
    var filled = 0
    while filled < bytes.count {
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
        if count < 0, errno == EINTR { continue }
        if count < 0 { return .failure(FileReadError(SystemError.text(errno))) }
        if count == 0 { break }
        filled += count
    }
    return .success(Array(bytes.prefix(filled)))
}

/// A small whole file as text (at most 4 MiB), or nil.
package func readTextFile(_ path: String) -> String? {
    try? readTextFile(path, limit: 4 << 20).get()
}

/// The names in the directory at `path` (not `.` and `..`), or the errno of why it cannot be listed.
package func directoryNames(_ path: String) -> Result<[String], DirectoryListingError> {
    guard let handle = opendir(path) else { return .failure(DirectoryListingError(code: errno)) }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != ".", name != ".." { names.append(name) }
    }
    return .success(names)
}

/// Why a directory could not be listed: its errno.
package struct DirectoryListingError: Error {
    package let code: Int32
}
