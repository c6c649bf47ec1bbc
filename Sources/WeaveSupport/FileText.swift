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
