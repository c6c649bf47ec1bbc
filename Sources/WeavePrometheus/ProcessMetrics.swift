import WeaveSupport

/// The standard `process_*` families, read from `/proc/self` at each scrape (as the Go and Python
/// clients do).
public struct ProcessMetrics: MetricCollector {
    public var name: String { "process" }
    public init() {}

    public func collect() async -> [MetricFamily] {
        Self.collection().families
    }

    /// Fails when `/proc/self/stat` cannot be read (`/proc` not mounted): the CPU and memory
    /// families are then missing.
    public func collection(for format: Exposition.Format) async -> CollectedFamilies {
        Self.collection()
    }

    public static func families() -> [MetricFamily] {
        collection().families
    }

    static func collection() -> CollectedFamilies {
        var families: [MetricFamily] = []
        var failure: String?
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let fields = statFields(), fields.count > 21, let utime = Double(fields[11]), let stime = Double(fields[12]),
           let vsize = Double(fields[20]), let rss = Double(fields[21]) {
            families.append(.counter("process_cpu_seconds", "Total user and system CPU time spent in seconds.",
                                     [([], (utime + stime) / ticks)]))
            families.append(.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", unit: "bytes", [([], vsize)]))
            families.append(.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", unit: "bytes",
                                   [([], rss * pageSize)]))
            if let start = startTime(fields) {
                families.append(.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                                       unit: "seconds", [([], start)]))
            }
        } else {
            failure = "cannot read /proc/self/stat"
        }
        families.append(.gauge("process_open_fds", "Number of open file descriptors.", [([], Double(openDescriptors()))]))
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            families.append(.gauge("process_max_fds", "Maximum number of open file descriptors.", [([], Double(limit.rlim_cur))]))
        }
        return CollectedFamilies(families, failure: failure)
    }

    /// When this process started, in seconds since the Unix epoch (`process_start_time_seconds`).
    public static func startTime() -> Double? {
        statFields().flatMap(startTime)
    }

    private static func startTime(_ fields: [Substring]) -> Double? {
        guard fields.count > 19, let bootTime, let start = Double(fields[19]) else { return nil }
        return bootTime + start / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The fields of `/proc/self/stat` after "pid (comm)": state is field 3, so index i is field i + 3.
    private static func statFields() -> [Substring]? {
        guard let stat = readTextFile("/proc/self/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// The boot time in `/proc/stat`, read once: the process's start does not move, and the file
    /// has lines for every CPU to read through.
    private static let bootTime: Double? = {
        guard let stat = readTextFile("/proc/stat") else { return nil }
        return stat.split(separator: "\n").first { $0.hasPrefix("btime ") }.flatMap { Double($0.dropFirst(6)) }
    }()

    private static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        return count - 1 // the descriptor opendir itself holds
    }
}
