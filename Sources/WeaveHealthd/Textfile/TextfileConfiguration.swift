import WeaveReaders
/// `textfile:`: a directory of `*.prom` files that cron jobs, backup scripts and deploy hooks write,
/// read at every `/metrics` (node_exporter's textfile collector, with the applications' validity rules).
struct TextfileConfiguration: Sendable, Equatable {
    var directory: String
    /// The largest file read; a larger one is an error for that file and is not read.
    var maxFileBytes: Int
    /// What one scrape reads of all the files together; a file that does not fit is an error for it.
    var maxTotalBytes: Int

    init(directory: String, maxFileBytes: Int = 4 << 20, maxTotalBytes: Int = 16 << 20) {
        self.directory = directory
        self.maxFileBytes = maxFileBytes
        self.maxTotalBytes = maxTotalBytes
    }
}

extension ConfigurationLoader {
    func textfile(_ node: YAMLNode) throws(ConfigurationError) -> TextfileConfiguration {
        let fields = try mapping(node, allowed: ["directory", "max_file_bytes", "max_total_bytes"])
        guard let directoryNode = fields["directory"] else { throw error(node, "textfile: needs a directory") }
        let directory = try string(directoryNode)
        guard directory.hasPrefix("/") else { throw error(directoryNode, "directory must be an absolute path") }
        var textfile = TextfileConfiguration(directory: directory)
        if let value = fields["max_file_bytes"] { textfile.maxFileBytes = try integer(value, in: 1_024...(256 << 20)) }
        if let value = fields["max_total_bytes"] { textfile.maxTotalBytes = try integer(value, in: 1_024...(1 << 30)) }
        if textfile.maxFileBytes > textfile.maxTotalBytes {
            throw error(fields["max_file_bytes"] ?? fields["max_total_bytes"],
                        "textfile: max_file_bytes (\(textfile.maxFileBytes)) must not exceed max_total_bytes (\(textfile.maxTotalBytes))")
        }
        return textfile
    }
}
