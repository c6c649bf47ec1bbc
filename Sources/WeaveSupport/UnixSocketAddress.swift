extension sockaddr_un {
    /// The address of the Unix socket at `path`; nil when the path does not fit `sun_path` with its
    /// terminating NUL (107 bytes on Linux).
    package init?(path: String) {
        self.init()
        sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: sun_path) else { return nil }
        withUnsafeMutableBytes(of: &sun_path) { $0.copyBytes(from: bytes) }
    }
}
