import Glibc
import Testing
@testable import WeaveHealthd
import WeavePrometheus

@Suite struct TextfilesTests {
    private func directory(_ files: [String: String]) -> String {
        var template = Array("/tmp/weave-textfile-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        for (name, text) in files {
            let file = fopen(path + "/" + name, "w")!
            fputs(text, file)
            fclose(file)
        }
        return path
    }

    private func remove(_ path: String) {
        _ = system("rm -rf '\(path)'")
    }

    @Test func readsGoodFilesAndReportsTheRestWithoutBreakingTheScrape() throws {
        let path = directory([
            "backup.prom": "# HELP backup_last_success_timestamp_seconds Last good backup.\n# TYPE backup_last_success_timestamp_seconds gauge\nbackup_last_success_timestamp_seconds 1.8e9\n",
            "broken.prom": "# TYPE deploys counter\ndeploys_total{env=\"prod\" 3\n",
            "deploy.prom.tmp": "being written, not yet renamed\n",
            ".hidden.prom": "not read either\n",
        ])
        defer { remove(path) }
        // 100 MB, sparse: refused on its size, never read.
        #expect(truncate(path + "/huge.prom", 100 << 20) == 0 || { fclose(fopen(path + "/huge.prom", "w")); return truncate(path + "/huge.prom", 100 << 20) == 0 }())
        let (files, failure, _) = Textfiles.read(TextfileConfiguration(directory: path))
        #expect(failure == nil)
        #expect(files.map(\.name) == ["backup.prom", "broken.prom", "huge.prom"])
        #expect(files[0].failure == nil && files[0].families.map(\.name) == ["backup_last_success_timestamp_seconds"])
        #expect(files[0].modified > 1_700_000_000)
        #expect(files[1].failure?.hasPrefix("not a valid exposition") == true && files[1].families.isEmpty)
        #expect(files[2].failure == "104857600 bytes, more than max_file_bytes (4194304)")
        let collector = Textfiles(blocking: BlockingCalls()) { TextfileConfiguration(directory: path) }
        let text = String(decoding: Exposition.render(collector.families(files, dropped: []), format: .prometheusText), as: UTF8.self)
        #expect(text.contains("weave_textfile_scrape_error{file=\"broken.prom\"} 1\n"))
        #expect(text.contains("weave_textfile_scrape_error{file=\"backup.prom\"} 0\n"))
        #expect(text.contains("weave_textfile_mtime_seconds{file=\"backup.prom\"} "))
    }

    @Test func aFileRemovedBeforeItIsReadIsGoneAndTheTotalIsBounded() {
        // Every family needs its TYPE line, as in an application's exposition.
        let path = directory(["a.prom": "# TYPE a gauge\na 1\n", "b.prom": "# TYPE b gauge\nb 2\n"]) // 19 bytes each
        defer { remove(path) }
        var room = 1_000
        #expect(Textfiles.read("removed.prom", in: TextfileConfiguration(directory: path), room: &room) == nil)
        // The total: the second file does not fit in what the first left.
        let (files, _, _) = Textfiles.read(TextfileConfiguration(directory: path, maxFileBytes: 1_024, maxTotalBytes: 1_024 + 4))
        #expect(files.map(\.failure) == [nil, nil])
        var small = 19 + 5
        #expect(Textfiles.read("a.prom", in: TextfileConfiguration(directory: path), room: &small)?.failure == nil)
        #expect(Textfiles.read("b.prom", in: TextfileConfiguration(directory: path), room: &small)?.failure?.contains("max_total_bytes") == true)
    }

    /// A file cannot use the daemon's names, nor add to a family before it, nor repeat another file's.
    @Test func filesJoinOnlyUnderNamesNothingElseRenders() throws {
        let own: [MetricFamily] = [.counter("weave_resolutions", "Resolves.", [([], 1)]), .gauge("queue_depth", "Depth.", [([], 3)])]
        let first = try ExpositionParser.parse(Array("# TYPE backup_age gauge\nbackup_age 5\n# TYPE queue_depth gauge\nqueue_depth 9\n".utf8))
        let second = try ExpositionParser.parse(Array("# TYPE backup_age gauge\nbackup_age 6\n# TYPE weave_forged gauge\nweave_forged 1\n".utf8))
        let (families, dropped) = FamilyAdmission.admitExclusive(after: own, sources: [("a.prom", first), ("b.prom", second)])
        #expect(families.map(\.name) == ["weave_resolutions", "queue_depth", "backup_age"])
        #expect(dropped == [.init(source: "a.prom", family: "queue_depth", reason: .conflict),
                            .init(source: "b.prom", family: "backup_age", reason: .conflict),
                            .init(source: "b.prom", family: "weave_forged", reason: .reserved)])
    }

    /// A file whose last line has no newline was read while it was written: a value cut short is
    /// a wrong value, so the file is refused, not published.
    @Test func aFileWithoutItsLastNewlineIsRefused() {
        let path = directory(["cut.prom": "# TYPE backup_bytes gauge\nbackup_bytes 12", "whole.prom": "# TYPE b gauge\nb 2\n"])
        defer { remove(path) }
        let (files, _, _) = Textfiles.read(TextfileConfiguration(directory: path))
        #expect(files.map(\.name) == ["cut.prom", "whole.prom"])
        #expect(files[0].failure?.hasPrefix("its last line has no newline") == true && files[0].families.isEmpty)
        #expect(files[1].failure == nil)
    }

    /// Files past the 1,000th and names that are not UTF-8 are counted, not silently ignored.
    @Test func filesLeftOutUnreadAreCounted() {
        let path = directory([:])
        defer { remove(path) }
        for number in 0...Textfiles.maxFiles { fclose(fopen(path + "/f\(number).prom", "w")) }
        // A name with the bytes FF FE, which no UTF-8 text holds.
        let raw = Array(path.utf8) + Array("/bad".utf8) + [0xFF, 0xFE] + Array(".prom".utf8) + [0]
        raw.withUnsafeBufferPointer { pointer in
            pointer.withMemoryRebound(to: CChar.self) { fclose(fopen($0.baseAddress!, "w")) }
        }
        let (files, _, skipped) = Textfiles.read(TextfileConfiguration(directory: path))
        #expect(files.count == Textfiles.maxFiles)
        #expect(skipped == Textfiles.Skipped(overLimit: 1, notUTF8: 1))
    }
}
