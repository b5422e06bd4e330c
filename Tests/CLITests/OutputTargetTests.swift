import Foundation
import Testing

/// `--output` follows the contract's rules (docs/cli.md, "Output"): devices and FIFOs written through, symlinks
/// followed, regular files replaced atomically with their mode and owner, inputs and read-only files refused.
/// Every device node, FIFO and link is made here, in a temporary directory: never the system's /dev nodes.
@Suite final class OutputTargetTests {
    let temp: TemporaryDirectory
    let night: String
    init() throws {
        temp = try TemporaryDirectory("sleepcycle-output")
        night = temp.path("night.wav")
        try TestWAV.pcm16(rate: 16_000, channels: [TestWAV.night()]).write(to: URL(fileURLWithPath: night))
    }

    func analyze(_ extra: [String], stdout: FileHandle? = nil) throws -> BuiltBinary.Run {
        try BuiltBinary.run(["analyze", night, "--format", "json"] + extra, stdout: stdout)
    }

    func fileType(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0
    }

    func oneLine(_ r: BuiltBinary.Run) -> Bool { r.stderr.split(separator: "\n").count == 1 }

    /// A character device of our own (`mknod`, needs root); nil when it cannot be made.
    func device(_ name: String, major: UInt32, minor: UInt32) -> String? {
        let path = temp.path(name)
        return mknod(path, S_IFCHR | 0o666, testDevice(major, minor)) == 0 ? path : nil
    }

    /// `--output /dev/stdout` (or `/dev/fd/1`, or a link to either) with standard output appended to a log: the
    /// output is appended through the open descriptor; the log is not replaced (it was, losing its lines). A
    /// descriptor that is not open, or open only for reading, is refused.
    @Test func theProcesssOwnDescriptorsAreWrittenThrough() throws {
        let log = temp.path("app.log")
        try Data("EXISTING\n".utf8).write(to: URL(fileURLWithPath: log))
        var before = stat()
        #expect(stat(log, &before) == 0)
        let link = temp.path("to-stdout")
        #expect(symlink("/dev/stdout", link) == 0)
        for name in ["/dev/stdout", "/dev/fd/1", link] {
            let handle = try #require(FileHandle(forWritingAtPath: log))
            handle.seekToEndOfFile()
            let r = try analyze(["--output", name], stdout: handle)
            try handle.close()
            #expect(r.status == 0, "\(name): \(r.stderr)")
        }
        var after = stat()
        #expect(stat(log, &after) == 0 && after.st_ino == before.st_ino, "the log was replaced")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.hasPrefix("EXISTING\n{") && text.components(separatedBy: "\"sessionId\"").count == 4)
        let closed = try analyze(["--output", "/dev/fd/9"])
        #expect(closed.status == 73 && closed.stderr.contains("is descriptor 9, which is not open"), "\(closed.stderr)")
    }

    @Test(.enabled(if: canMakeDeviceNodes, "making device nodes needs root"))
    func aDeviceIsWrittenThroughAndStaysADevice() throws {
        let null = try #require(device("null", major: 1, minor: 3))
        let r = try analyze(["--output", null])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(fileType(null) == S_IFCHR)
    }

    @Test(.enabled(if: canMakeDeviceNodes, "making device nodes needs root"))
    func aFullDeviceIsAnIOErrorOnOneLine() throws {
        let full = try #require(device("full", major: 1, minor: 7))
        let r = try analyze(["--output", full])
        #expect(r.status == 74 && oneLine(r), "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("no space left"))
        #expect(fileType(full) == S_IFCHR)
        // Standard output on such a device: the same one line, no crash (a `try!` in the writer trapped before).
        let handle = try #require(FileHandle(forWritingAtPath: full))
        for command in [["analyze", night], ["features", night], ["stage", "--epochs", StageCommandTests.fixture("synthetic_full.csv")]] {
            let s = try BuiltBinary.run(command, stdout: handle)
            #expect(s.status == 74 && oneLine(s), "\(command[0]): \(s.status) \(s.stderr)")
        }
    }

    @Test func symbolicLinksAreFollowed() throws {
        let target = temp.path("report.json")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let link = temp.path("link.json")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "report.json")
        let r = try analyze(["--output", link])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(fileType(link) == S_IFLNK)
        #expect(try String(contentsOfFile: target, encoding: .utf8).hasPrefix("{"))
        // A dangling link: the file it names is created, the link stays.
        let dangling = temp.path("dangling.json")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: temp.path("created.json"))
        #expect(try analyze(["--output", dangling]).status == 0)
        #expect(fileType(dangling) == S_IFLNK && fileType(temp.path("created.json")) == S_IFREG)
        // A loop: one line, status 73.
        let loop = temp.path("loop")
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: "loop")
        let l = try analyze(["--output", loop])
        #expect(l.status == 73 && oneLine(l) && l.stderr.contains("symbolic link"), "\(l.stderr)")
    }

    @Test func aFIFOIsWrittenThroughAndAFIFOWithoutReaderIsAnError() throws {
        let fifo = temp.path("fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        // No reader: an error at once, not a hang.
        let lonely = try analyze(["--output", fifo])
        #expect(lonely.status == 73 && oneLine(lonely), "\(lonely.stderr)")
        // With a reader: the reader gets the JSON and the FIFO stays a FIFO.
        nonisolated(unsafe) var received = Data()
        let reader = Thread {
            let fd = open(fifo, O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                received.append(contentsOf: buffer[0..<n])
            }
            close(fd)
        }
        reader.start()
        var r = try analyze(["--output", fifo])
        for _ in 0..<50 where r.status == 73 {     // the reader thread may not have opened its end yet
            usleep(100_000)
            r = try analyze(["--output", fifo])
        }
        while !reader.isFinished { usleep(10_000) }
        #expect(r.status == 0, "\(r.stderr)")
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("{"))
        #expect(fileType(fifo) == S_IFIFO)
    }

    @Test func dashIsStandardOutput() throws {
        let r = try BuiltBinary.run(["analyze", night, "--format", "json", "--output", "-"], directory: temp.url)
        #expect(r.status == 0 && r.stdout.hasPrefix("{"))
        #expect(!FileManager.default.fileExists(atPath: temp.path("-")))
    }

    @Test func anInputIsNeverTheOutput() throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: night))
        let hr = temp.path("hr.csv")
        try Data("time,bpm\n0,60\n5,61\n".utf8).write(to: URL(fileURLWithPath: hr))
        let hardLink = temp.path("hard.wav")
        try FileManager.default.linkItem(atPath: night, toPath: hardLink)
        let softLink = temp.path("soft.wav")
        try FileManager.default.createSymbolicLink(atPath: softLink, withDestinationPath: night)
        for output in [night, hardLink, softLink, temp.path("./night.wav")] {
            let r = try analyze(["--output", output])
            #expect(r.status == 73 && oneLine(r) && r.stderr.contains("input"), "\(output): \(r.stderr)")
        }
        let r = try analyze(["--hr", hr, "--output", hr])
        #expect(r.status == 73 && oneLine(r), "\(r.stderr)")
        let stage = try BuiltBinary.run(["stage", "--epochs", hr, "--output", hr])
        #expect(stage.status == 73, "\(stage.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: night)) == before)
        #expect(try String(contentsOfFile: hr, encoding: .utf8) == "time,bpm\n0,60\n5,61\n")
    }

    /// Every file a command reads is an input: key files (losing a key loses every clip encrypted with it), the
    /// channel-separation configuration, `record`'s input and wearable file, and the store with its -wal, -shm and
    /// lock file.
    @Test func keysConfigurationsAndTheStoreAreInputsToo() throws {
        let key = temp.path("clips.key")
        let keyBytes = Data((0..<32).map { UInt8($0) })
        try keyBytes.write(to: URL(fileURLWithPath: key))
        let config = temp.path("separation.json")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: config))
        let refused: [[String]] = [
            ["analyze", night, "--clips", temp.path("clips"), "--clips-key", key, "--output", key],
            ["analyze", night, "--channel-separation", "bedside", "--channel-separation-config", config, "--output", config],
        ]
        for args in refused {
            let r = try BuiltBinary.run(args)
            #expect(r.status == 73 && oneLine(r) && r.stderr.contains("input"), "\(args): \(r.stderr)")
        }
        let raw = Data(count: 32_000 * 3)
        let store = temp.path("nights.sqlite")
        let recordArgs = ["record", "--input", "-", "--store", store, "--format", "json"]
        let hr = temp.path("hr.csv")
        try Data("time,bpm\n0,60\n".utf8).write(to: URL(fileURLWithPath: hr))
        for extra in [["--hr", hr, "--output", hr], ["--wearable-key", key, "--output", key],
                      ["--clips", temp.path("clips"), "--clips-key", key, "--output", key]] {
            let r = try BuiltBinary.run(recordArgs + extra, stdin: raw)
            #expect(r.status == 73 && oneLine(r), "\(extra): \(r.stderr)")
        }
        let pcm = temp.path("night.raw")
        try raw.write(to: URL(fileURLWithPath: pcm))
        let fromFile = try BuiltBinary.run(["record", "--input", pcm, "--store", store, "--output", pcm])
        #expect(fromFile.status == 73 && oneLine(fromFile), "\(fromFile.stderr)")
        // A stored night; then its store's files are inputs of `sessions show`.
        let recorded = try BuiltBinary.run(recordArgs, stdin: raw)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let id = try #require((try JSONSerialization.jsonObject(with: Data(recorded.stdout.utf8)) as? [String: Any])?["sessionId"] as? String)
        // The recorder's lock file too: replaced, it would let a second recorder in beside a running one.
        #expect(FileManager.default.fileExists(atPath: store + ".lock"))
        for file in [store, store + "-wal", store + "-shm", store + ".lock"] where FileManager.default.fileExists(atPath: file) {
            let r = try BuiltBinary.run(["sessions", "show", id, "--store", store, "--output", file])
            #expect(r.status == 73 && oneLine(r), "\(file): \(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: key)) == keyBytes)
        #expect(try String(contentsOfFile: config, encoding: .utf8) == "{}")
        #expect(try String(contentsOfFile: hr, encoding: .utf8) == "time,bpm\n0,60\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: pcm)) == raw)
    }

    /// What the command itself makes is refused as the output before any work, by any spelling, although it does
    /// not exist yet: a new store (`record` stored the night, then replaced the store with the summary: the night
    /// lost, exit 0), the clips folder (the whole night analysed and its clips written, then the output refused).
    @Test func whatTheCommandMakesIsNeverTheOutput() throws {
        let raw = Data(count: 32_000 * 3)
        let folder = temp.path("new")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = folder + "/nights.sqlite"
        for output in [store, temp.path("new/./nights.sqlite"), temp.path("new/../new/nights.sqlite")] {
            let r = try BuiltBinary.run(["record", "--input", "-", "--store", store, "--output", output], stdin: raw)
            #expect(r.status == 73 && oneLine(r) && r.stderr.contains("input"), "\(output): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: store), "nothing was recorded")
        }
        // The store's folder, made for it: the night was stored, then its output refused (and not printed).
        let later = temp.path("later")
        let inFolder = try BuiltBinary.run(["record", "--input", "-", "--store", later + "/s.sqlite", "--output", later],
                                           stdin: raw)
        #expect(inFolder.status == 73 && oneLine(inFolder) && !FileManager.default.fileExists(atPath: later),
                "\(inFolder.stderr)")
        let report = try BuiltBinary.run(["sessions", "report", "--store", store, "--output", store])
        #expect(report.status == 73 && oneLine(report), "\(report.stderr)")
        let clips = temp.path("clips-out")
        let r = try analyze(["--clips", clips, "--output", clips])
        #expect(r.status == 73 && oneLine(r) && r.stderr.contains("a path this command writes"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: clips), "no clip was written")
        // A new output beside them is fine.
        let fine = try BuiltBinary.run(["record", "--input", "-", "--store", store, "--output", folder + "/night.txt"], stdin: raw)
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    @Test func aReplacedFileKeepsItsModeAndOwner() throws {
        let out = temp.path("night.json")
        try Data("old".utf8).write(to: URL(fileURLWithPath: out))
        #expect(chmod(out, 0o640) == 0)
        let asRoot = getuid() == 0
        if asRoot { #expect(chown(out, 1234, 5678) == 0) }
        let r = try analyze(["--output", out])
        #expect(r.status == 0, "\(r.stderr)")
        var st = stat()
        #expect(stat(out, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o640)
        if asRoot { #expect(st.st_uid == 1234 && st.st_gid == 5678) }
        #expect(try String(contentsOfFile: out, encoding: .utf8).hasPrefix("{"))
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.url.path).filter { $0.hasPrefix(".") }.isEmpty)
    }

    @Test func readOnlyFilesDirectoriesAndMissingFoldersAreRefused() throws {
        let readOnly = temp.path("ro.json")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: readOnly))
        #expect(chmod(readOnly, 0o444) == 0)
        for (output, words) in [(readOnly, "read-only"), (temp.url.path, "directory"),
                                (temp.path("no/such/dir/out.json"), "does not exist"), ("", "empty")] {
            let r = try analyze(["--output", output])
            #expect(r.status == 73 || (output.isEmpty && r.status == 64), "\(output): \(r.status)")
            #expect(oneLine(r) && r.stderr.contains(words), "\(output): \(r.stderr)")
        }
        #expect(try String(contentsOfFile: readOnly, encoding: .utf8) == "keep")
    }
}
