import Logging
import WeavePrometheus
import WeaveSupport

/// The `*.prom` files of the `textfile:` directory, read at every `/metrics` with node_exporter's
/// semantics: writers write another name and rename into place (only `*.prom` is read, never a
/// dotfile); each file's modification time is a metric; a family without help text gets one naming
/// the file; a file that is unreadable, too large or not
/// a valid exposition (the applications' rules, `ExpositionParser`) is reported, by
/// `weave_textfile_scrape_error{file}` and one warning when that changes, and never breaks
/// `/metrics`. A file removed between the listing and its reading is simply gone.
///
/// Its families join the rest in `DaemonExposition`, after every other, and only under names no family
/// before them renders (`FamilyAdmission.admitExclusive`): a file cannot add series to another's
/// family, nor repeat one.
final class Textfiles: Sendable {
    /// One file's part of a scrape.
    struct File: Sendable {
        /// Its name in the directory (`backup.prom`): the `file` label.
        let name: String
        /// Its modification time, in seconds since the Unix epoch.
        let modified: Double
        let families: [MetricFamily]
        /// Why it is not used; nil when it is.
        let failure: String?
    }

    /// Files read at most per scrape, in name order; the rest are counted
    /// (`weave_textfile_files_skipped{reason="over_limit"}`) and logged.
    static let maxFiles = 1_000

    /// `*.prom` files a scrape left out without reading them.
    struct Skipped: Sendable, Equatable {
        /// Past the `maxFiles`-th, in name order.
        var overLimit = 0
        /// Whose name is not UTF-8 (it cannot be a label value).
        var notUTF8 = 0
    }
    /// How long a scrape waits for the directory to be read.
    static let deadline: Duration = .seconds(5)

    /// The current configuration's `textfile:` (a reload swaps it), nil for none.
    let configuration: @Sendable () -> TextfileConfiguration?
    /// Where the directory is read: a stalled file system holds one thread, and one read at a time.
    private let blocking: BlockingCalls
    private let logger = Logger(label: "weave.healthd.textfile")
    /// The last failure logged per file, and the directory's, so each change is logged once.
    private let logged = Locked<[String: String]>([:])
    /// What the last scrape left out unread.
    private let skipped = Locked(Skipped())

    init(blocking: BlockingCalls, configuration: @escaping @Sendable () -> TextfileConfiguration?) {
        self.blocking = blocking
        self.configuration = configuration
    }

    /// Every file of the directory, read now on `blocking`: a stalled file system holds one thread,
    /// and the scrapes meanwhile go on without the files (the reason is logged).
    func read() async -> [File] {
        guard let configuration = configuration() else { return [] }
        let (files, failure, left) = await (try? blocking.run("textfiles", lane: .files, deadline: Self.deadline) { Self.read(configuration) })
            ?? ([], "it was not read within \(Self.deadline.totalSeconds) s, or its last read has not returned", Skipped())
        note("", failure.map { "the directory \(configuration.directory) cannot be read: \($0)" })
        skipped.withLock { $0 = left }
        note("\u{0}over-limit", left.overLimit == 0 ? nil
             : "\(left.overLimit) files of \(configuration.directory) are left out of /metrics: only the first \(Self.maxFiles) in name order are read")
        note("\u{0}not-utf8", left.notUTF8 == 0 ? nil
             : "\(left.notUTF8) files of \(configuration.directory) are left out of /metrics: their names are not UTF-8")
        for file in files { note(file.name, file.failure.map { "\(configuration.directory)/\(file.name) is left out of /metrics: \($0)" }) }
        // Files that are gone are forgotten: writers that use a new name each time do not grow this.
        let present = Set(files.map(\.name))
        logged.withLock { logged in
            // (Keys of the directory's own notes, "" and "\0…", stay.)
            logged = logged.filter { key, _ in key.isEmpty || key.hasPrefix("\u{0}") || present.contains(String(key.prefix { $0 != "\u{0}" })) }
        }
        return files
    }

    /// The families about the files: their modification times, which are unusable, and how many of
    /// their families `FamilyAdmission` left out (logged once each).
    func families(_ files: [File], dropped: [FamilyAdmission.Drop]) -> [MetricFamily] {
        guard configuration() != nil else { return [] }
        var left: [String: Int] = [:]
        for drop in dropped {
            left[drop.source, default: 0] += 1
            let why = drop.reason == .reserved ? "weave_* names are the daemon's and the applications'"
                : "a family before it (the daemon's, an application's or another file's) renders that name"
            note("\(drop.source)\u{0}\(drop.family)", "\(drop.source)'s family \(drop.family) is left out of /metrics: \(why)")
        }
        let unread = skipped.withLock { $0 }
        return [
            .gauge("weave_textfile_files_skipped",
                   "*.prom files of the textfile directory left out of this scrape unread: over_limit (past the 1,000th) or name_not_utf8.",
                   [([("reason", "over_limit")], Double(unread.overLimit)), ([("reason", "name_not_utf8")], Double(unread.notUTF8))]),
            .gauge("weave_textfile_mtime_seconds", "Modification time of a textfile directory's file.", unit: "seconds",
                   files.map { ([("file", $0.name)], $0.modified) }),
            .gauge("weave_textfile_scrape_error", "Whether a textfile directory's file could not be used in this scrape (1) or could (0).",
                   files.map { ([("file", $0.name)], $0.failure == nil ? 0 : 1) }),
            .gauge("weave_textfile_dropped_families", "Families of a textfile left out of this scrape: a weave_* name, or one another family renders.",
                   files.map { ([("file", $0.name)], Double(left[$0.name] ?? 0)) }),
        ]
    }

    /// Logs `failure` for `key` when it differs from the last one logged, and the recovery when it clears.
    private func note(_ key: String, _ failure: String?) {
        let previous = logged.withLock { logged -> String?? in
            let previous = logged[key]
            guard previous != failure else { return .none }
            logged[key] = failure
            return .some(previous)
        }
        guard case .some(let before) = previous else { return }
        if let failure {
            logger.warning("\(failure)", metadata: ["file": "\(key.split(separator: "\u{0}").first ?? "")"])
        } else if before != nil, !key.contains("\u{0}") {
            logger.info("\(key.isEmpty ? "The textfile directory" : key) can be read again")
        }
    }

    /// Lists and reads the directory.
    static func read(_ configuration: TextfileConfiguration) -> (files: [File], failure: String?, skipped: Skipped) {
        let listed: [String]
        switch directoryNames(configuration.directory) {
        case .success(let all): listed = all
        case .failure(let error): return ([], SystemError.text(error.code), Skipped())
        }
        var skipped = Skipped()
        // A name that is not UTF-8 was decoded with U+FFFD in place of its bad bytes.
        let names = listed.filter { $0.hasSuffix(".prom") && !$0.hasPrefix(".") }.filter { name in
            guard name.unicodeScalars.contains("\u{FFFD}") else { return true }
            skipped.notUTF8 += 1
            return false
        }.sorted()
        skipped.overLimit = max(0, names.count - maxFiles)
        var room = configuration.maxTotalBytes
        var files: [File] = []
        for name in names.prefix(maxFiles) {
            if let file = read(name, in: configuration, room: &room) { files.append(file) }
        }
        return (files, nil, skipped)
    }

    /// One file, or nil when it is gone (removed between the listing and now) or not a regular file.
    static func read(_ name: String, in configuration: TextfileConfiguration, room: inout Int) -> File? {
        let path = configuration.directory + "/" + name
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            return File(name: name, modified: 0, families: [], failure: SystemError.text(code))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        func failed(_ reason: String) -> File { File(name: name, modified: modified, families: [], failure: reason) }
        let size = Int(status.st_size)
        if size > configuration.maxFileBytes { return failed("\(size) bytes, more than max_file_bytes (\(configuration.maxFileBytes))") }
        if size > room { return failed("\(size) bytes do not fit in what is left of max_total_bytes (\(configuration.maxTotalBytes)) in this scrape") }
        // Read to the end, one byte past the limit at most: a file that grows meanwhile is not read past it.
        var bytes = [UInt8](repeating: 0, count: min(size, configuration.maxFileBytes) + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { return failed(SystemError.text(errno)) }
            if got == 0 { break }
            count += got
        }
        if count > size { return failed("it grew while it was read: write another name and rename it into place") }
        bytes.removeLast(bytes.count - count)
        room -= count
        if let last = bytes.last, last != UInt8(ascii: "\n") {
            return failed("its last line has no newline: it was read while being written (write another name and rename it into place)")
        }
        do {
            var families = try ExpositionParser.parse(bytes)
            // As node_exporter does: a family the file gave no help text gets one naming the file.
            for index in families.indices where families[index].help.isEmpty {
                families[index].help = "Metric read from \(path)."
            }
            return File(name: name, modified: modified, families: families, failure: nil)
        } catch {
            return failed("not a valid exposition: \(error)")
        }
    }
}
