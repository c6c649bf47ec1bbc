import CSystemd
import WeaveSupport

/// journald's native protocol, through libsystemd.
public enum Journal {
    /// Sends one entry of `FIELD=value` strings with `sd_journal_sendv`; returns 0 or a negative errno
    /// (for example `-ENOENT` when journald's socket does not exist, `-ECONNREFUSED` when nobody reads it).
    public static func send(_ fields: [String]) -> Int32 {
        var bytes: [UInt8] = []
        var ranges: [(offset: Int, count: Int)] = []
        for field in fields {
            ranges.append((bytes.count, field.utf8.count))
            bytes += field.utf8
        }
        guard !bytes.isEmpty else { return -EINVAL }
        return bytes.withUnsafeMutableBytes { buffer in
            var vectors = ranges.map { iovec(iov_base: buffer.baseAddress! + $0.offset, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }

    /// Whether standard error is already connected to the journal: `$JOURNAL_STREAM` names the
    /// device and inode of the stream systemd gave the service, and they match fd 2.
    public static var standardErrorIsJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: value).split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
