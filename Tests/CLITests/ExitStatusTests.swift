import Foundation
import Testing

/// One exit-status scheme for every command (docs/cli.md): the same kind of mistake gives the same status and one
/// line on standard error, whichever command meets it.
@Suite final class ExitStatusTests {
    let temp: TemporaryDirectory
    let night: String
    init() throws {
        temp = try TemporaryDirectory("sleepcycle-status")
        night = temp.path("night.wav")
        try TestWAV.pcm16(rate: 16_000, channels: [TestWAV.night()]).write(to: URL(fileURLWithPath: night))
    }

    func expectOneLine(_ r: BuiltBinary.Run, status: Int32, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == status, "\(context): status \(r.status), \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.split(separator: "\n").count == 1, "\(context): \(r.stderr)", sourceLocation: sourceLocation)
        #expect(!r.stderr.contains("\u{1B}"), "\(context)", sourceLocation: sourceLocation)
    }

    @Test func badOptionsAre64OnOneLine() throws {
        let cases: [[String]] = [
            ["analyze", night, "--bogus"], ["features", night, "--bogus"], ["stage", "--epochs", "x.csv", "--bogus"],
            ["analyze"], ["stage"], ["analyze", night, "--format", "xml"], ["features", night, "--frame-length", "7"],
            ["analyze", night, "--start", "2026-01-01T23:00:00+25:00"], ["analyze", night, "--start", "tomorrow"],
            ["analyze", night, "--start", "9999-12-31T23:59:59.999Z"], ["analyze", night, "--start", "0000-01-01T00:00:00Z"],
            ["record", "--input", "-", "--start", "1969-12-31T23:59:59Z"],
            ["analyze", night, "--pace", "1e-300"], ["analyze", night, "--pace", "nan"], ["analyze", night, "--alarm", "25:00"],
            ["analyze", night, "--alarm", "07:00", "--alarm-window", "1e400h"], ["analyze", night, "--alarm-window", "30m"],
            ["analyze", night, "--verbose", "--quiet"], ["nonsense"],
        ]
        for args in cases { expectOneLine(try BuiltBinary.run(args), status: 64, args.joined(separator: " ")) }
        let offset = try BuiltBinary.run(["analyze", night, "--start", "2026-01-01T23:00:00+25:00"])
        #expect(offset.stderr.contains("+25:00 is out of range"))
    }

    /// A negative number is a value out of range, not a missing value: the argument parser takes "-1" for an option
    /// unless the option parses its next word unconditionally.
    @Test func negativeNumbersAreNamedAsOutOfRange() throws {
        let clips = temp.path("clips")
        let cases: [([String], String)] = [
            (["analyze", night, "--clips", clips, "--clips-per-type", "-1"], "--clips-per-type must be at least 1"),
            (["analyze", night, "--clips", clips, "--clip-length", "-3"], "-3"),
            (["analyze", night, "--clips", clips, "--clips-max-size", "-5MB"], "-5MB"),
            (["analyze", night, "--alarm", "07:00", "--alarm-window", "-10m"], "-10m"),
            (["features", night, "--frame-length", "-1024"], "-1024"),
            (["features", night, "--hop-length", "-1"], "-1"),
            (["record", "--input", "-", "--rate", "-1"], "-1"),
            (["record", "--input", "-", "--channels", "-2"], "-2"),
            (["record", "--input", "-", "--duration", "-5m"], "-5m"),
            (["sessions", "prune", "--older-than", "-3d", "--store", temp.path("s.sqlite")], "-3d"),
            (["hr-session", night, "--window", "-60s"], "-60s"),
        ]
        for (args, named) in cases {
            let r = try BuiltBinary.run(args)
            expectOneLine(r, status: 64, args.joined(separator: " "))
            #expect(!r.stderr.contains("Missing value") && r.stderr.contains(named), "\(args): \(r.stderr)")
        }
    }

    @Test func missingInputsAre66() throws {
        let missing = temp.path("missing.wav")
        for args in [["analyze", missing], ["features", missing], ["stage", "--epochs", missing],
                     ["analyze", night, "--hr", missing], ["analyze", night, "--motion", temp.url.path],
                     ["detect-dev", "events", "--input", "/dev/null", "--model", temp.path("missing-model.json")]] {
            let r = try BuiltBinary.run(args)
            expectOneLine(r, status: 66, args.joined(separator: " "))
        }
        // A symbolic-link loop is called one, not "no such file".
        let loop = temp.path("loop.wav")
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: "loop.wav")
        let r = try BuiltBinary.run(["analyze", night, "--hr", loop])
        #expect(r.stderr.contains("symbolic link"), "\(r.stderr)")
        // An empty path is named as one, not left out (": no such file").
        for args in [["analyze", ""], ["analyze", night, "--hr", ""], ["stage", "--epochs", ""]] {
            let empty = try BuiltBinary.run(args)
            expectOneLine(empty, status: 66, args.joined(separator: " "))
            #expect(empty.stderr.contains("''"), "\(empty.stderr)")
        }
    }

    /// Standard input closed (`<&-`), or a directory: one line, never a hang (a pipe of the command's own taking
    /// descriptor 0) or a crash. Standard output closed: the output cannot be written, status 74.
    @Test func closedOrOddStandardDescriptorsAreOneLine() throws {
        let binary = try #require(BuiltBinary.url).path
        func shell(_ script: String) throws -> BuiltBinary.Run {
            let key = temp.path("k.key")
            try Data(count: 32).write(to: URL(fileURLWithPath: key))
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", script, binary, night, key, temp.path(".")]
            let errors = Pipe()
            p.standardError = errors
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            let killer = DispatchWorkItem { p.terminate() }
            DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: killer)
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            killer.cancel()
            return BuiltBinary.Run(status: p.terminationStatus, stdout: "", stderr: stderr)
        }
        for (script, status) in [("\"$0\" analyze - --no-progress <&-", Int32(65)),
                                 ("\"$0\" clips decrypt - --key \"$2\" --output /dev/null <&-", 66),
                                 ("\"$0\" clips decrypt - --key \"$2\" --output /dev/null < \"$3\"", 66),
                                 ("\"$0\" analyze \"$1\" --no-progress --format json >&-", 74)] {
            expectOneLine(try shell(script), status: status, script)
        }
    }

    @Test func malformedInputsAre65() throws {
        let notAudio = temp.path("notes.wav")
        try Data("this is not audio\n".utf8).write(to: URL(fileURLWithPath: notAudio))
        let badCSV = temp.path("bad.csv")
        try Data("time,bpm\n0,60\n1,abc\n".utf8).write(to: URL(fileURLWithPath: badCSV))
        let badModel = temp.path("model.json")
        try Data("{\"format\": \"nope\"}".utf8).write(to: URL(fileURLWithPath: badModel))
        for args in [["analyze", notAudio], ["features", notAudio], ["stage", "--epochs", badCSV],
                     ["analyze", night, "--hr", badCSV], ["analyze", night, "--motion", badCSV],
                     ["detect-dev", "events", "--input", "/dev/null", "--model", badModel]] {
            let r = try BuiltBinary.run(args)
            expectOneLine(r, status: 65, args.joined(separator: " "))
            #expect(!r.stderr.contains("internal error"), "\(r.stderr)")
        }
    }

    /// Input that decodes to no frame at all is no night (65), not an empty result: a WAV header alone through a
    /// pipe (whose length cannot be checked before reading), and a key file of megabytes is refused at once.
    @Test func inputsWithNothingInThemAre65() throws {
        let wav = try Data(contentsOf: URL(fileURLWithPath: night))
        let header = try BuiltBinary.run(["analyze", "-"], stdin: wav.prefix(44))
        expectOneLine(header, status: 65, "a WAV header on standard input")
        #expect(header.stderr.contains("-: contains no audio frames") && header.stderr.contains("give it as a file"),
                "\(header.stderr)")
        // The same header as a file is not a stream: no hint to give it as one.
        let file = temp.path("header.wav")
        try wav.prefix(44).write(to: URL(fileURLWithPath: file))
        let asFile = try BuiltBinary.run(["analyze", file])
        #expect(asFile.status == 65 && !asFile.stderr.contains("give it as a file"), "\(asFile.stderr)")
        let key = temp.path("big.key")
        try Data(repeating: 0x41, count: 1 << 20).write(to: URL(fileURLWithPath: key))
        let big = try BuiltBinary.run(["analyze", night, "--clips", temp.path("clips"), "--clips-key", key])
        expectOneLine(big, status: 65, "a 1-MB key file")
        #expect(big.stderr.contains("larger than 4 KiB"), "\(big.stderr)")
    }

    /// A FIFO whose writer has already finished is read once (the session id's look at the file's edges used to
    /// open it a second time and wait forever for another writer).
    @Test func aFIFOWhoseWriterHasFinishedIsAnalysed() throws {
        let fifo = temp.path("night.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let wav = try Data(contentsOf: URL(fileURLWithPath: night))
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "head -c 40000 \"$0\" > \"$1\"", night, fifo]
        try writer.run()
        usleep(300_000)      // the writer has written its 40 kB into the pipe and gone
        let r = try BuiltBinary.shell("exec timeout 30 \"$0\" analyze '\(fifo)' --format json")
        writer.waitUntilExit()
        #expect(r.status == 0, "\(r.status) \(r.stderr)")
        #expect(wav.count > 40_000 && r.stdout.contains("\"sessionId\""))
    }

    /// Huge and non-finite CSV times trapped in a Double → Int64 conversion (SIGILL); now they are one line.
    @Test(arguments: ["1e300", "-1e20", "0x1p1023", "inf"])
    func hugeCSVTimesAreOneLine(_ time: String) throws {
        let hr = temp.path("hr-\(time).csv")
        try Data("time,bpm\n\(time),60\n".utf8).write(to: URL(fileURLWithPath: hr))
        expectOneLine(try BuiltBinary.run(["analyze", night, "--hr", hr]), status: 65, time)
    }

    @Test func userTextInErrorsIsCutAndSanitised() throws {
        let hr = temp.path("escape.csv")
        try Data(("time,bpm\n0,\u{1B}]0;pwned\u{07}" + String(repeating: "9x", count: 2_000_000) + "\n").utf8)
            .write(to: URL(fileURLWithPath: hr))
        let r = try BuiltBinary.run(["analyze", night, "--hr", hr])
        expectOneLine(r, status: 65, "escape")
        #expect(r.stderr.count < 600, "\(r.stderr.count) bytes")
        #expect(!r.stderr.contains("\u{07}"))
    }

    @Test(.enabled(if: canMakeDeviceNodes, "making device nodes needs root"))
    func aZeroDeviceIsNotATextFile() throws {
        #expect(mknod(temp.path("zero"), S_IFCHR | 0o666, testDevice(1, 5)) == 0)
        let r = try BuiltBinary.run(["analyze", night, "--hr", temp.path("zero")])
        expectOneLine(r, status: 65, "zero as --hr")
        #expect(r.stderr.contains("not a text file"), "\(r.stderr)")
    }

    @Test func nonUTF8FileNamesCanBeOpened() throws {
        let name = [UInt8]("night-".utf8) + [0xE9, 0xFF] + [UInt8](".wav".utf8)
        let path = [UInt8](temp.url.path.utf8) + [UInt8(ascii: "/")] + name + [0]
        let data = TestWAV.pcm16(rate: 16_000, channels: [TestWAV.night()])
        let fd = path.withUnsafeBufferPointer { p in
            open(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), O_WRONLY | O_CREAT, 0o644)
        }
        #expect(fd >= 0)
        data.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let r = try BuiltBinary.shell("cd '\(temp.url.path)' && exec \"$0\" analyze \"$(printf 'night-\\351\\377.wav')\" --format json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("night-\\\\xE9\\\\xFF.wav") || r.stdout.contains("night-\\xE9\\xFF.wav"), "\(r.stdout.prefix(300))")
        let missing = try BuiltBinary.shell("exec \"$0\" analyze \"$(printf 'gone-\\377.wav')\"")
        #expect(missing.status == 66 && missing.stderr.contains("gone-\\xFF.wav"), "\(missing.stderr)")
        // Clips go into the folder of that very name (they went into one named by its escaped spelling); a store,
        // which SQLite opens by a UTF-8 name, is refused before anything is made.
        let clips = try BuiltBinary.shell("cd '\(temp.url.path)' && exec \"$0\" analyze \"$(printf 'night-\\351\\377.wav')\" "
            + "--clips \"$(printf 'clips-\\377')\" --format json")
        #expect(clips.status == 0, "\(clips.stderr)")
        var st = stat()
        let folder = [UInt8](temp.url.path.utf8) + [UInt8]("/clips-".utf8) + [0xFF, 0]
        #expect(folder.withUnsafeBufferPointer { p in
            stat(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), &st)
        } == 0 && (st.st_mode & S_IFMT) == S_IFDIR)
        let store = try BuiltBinary.shell("cd '\(temp.url.path)' && exec \"$0\" record --input - --rate 16000 --store "
            + "\"$(printf 'store-\\377/n.sqlite')\" < /dev/null")
        expectOneLine(store, status: 73, "a non-UTF-8 store name")
        #expect(store.stderr.contains("store-\\xFF/n.sqlite: the store's name is not UTF-8"), "\(store.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.url.path).allSatisfy { !$0.hasPrefix("store") })
    }

    /// A file whose name starts with `-` is read as options; the usage error says so (it said only "Missing
    /// expected argument '<file>'"), and `./-x.wav` or `-- -x.wav` opens it.
    @Test func aFileNamedLikeAnOptionGetsAHint() throws {
        let data = TestWAV.pcm16(rate: 16_000, channels: [TestWAV.night()])
        try data.write(to: temp.url.appendingPathComponent("-x.wav"))
        let r = try BuiltBinary.shell("cd '\(temp.url.path)' && exec \"$0\" analyze -x.wav")
        expectOneLine(r, status: 64, "analyze -x.wav")
        #expect(r.stderr.contains("'-x.wav' is a file but reads as options: write ./-x.wav, or put it after --"), "\(r.stderr)")
        for form in ["./-x.wav", "-- -x.wav"] {
            let ok = try BuiltBinary.shell("cd '\(temp.url.path)' && exec \"$0\" analyze --format json \(form)")
            #expect(ok.status == 0, "\(form): \(ok.stderr)")
        }
        let missing = try BuiltBinary.shell("cd '\(temp.url.path)' && exec \"$0\" analyze -y.wav")
        #expect(missing.status == 64 && !missing.stderr.contains("is a file"), "\(missing.stderr)")
    }

    @Test func versionAndHelpAreNotErrors() throws {
        let v = try BuiltBinary.run(["--version"])
        #expect(v.status == 0 && v.stdout.split(separator: ".").count == 3, "\(v.stdout)")
        let h = try BuiltBinary.run(["analyze", "--help"])
        #expect(h.status == 0 && h.stdout.contains("--output"))
        let nested = try BuiltBinary.run(["help", "sessions", "list"])
        #expect(nested.status == 0 && nested.stdout.contains("--store"), "\(nested.stderr)")
        // A subcommand that does not exist is a usage error, not the overview with success.
        for args in [["help", "analyse"], ["help", "sessions", "lst"]] {
            let r = try BuiltBinary.run(args)
            expectOneLine(r, status: 64, args.joined(separator: " "))
            #expect(r.stderr.contains("no subcommand '\(args.last!)'"), "\(r.stderr)")
        }
    }

    @Test func completionsCompleteFilePaths() throws {
        let bash = try BuiltBinary.run(["--generate-completion-script", "bash"])
        #expect(bash.status == 0)
        #expect(bash.stdout.contains("-f") || bash.stdout.contains("__sleepcycle_complete_file") || bash.stdout.contains("compgen -f"),
                "no file completion in the bash script")
        let zsh = try BuiltBinary.run(["--generate-completion-script", "zsh"])
        #expect(zsh.stdout.contains("_files"))
    }
}
