import Foundation
@testable import SleepCycleAudio
import SleepCycleDSP
import Testing

/// `--clips DIR`, `--clips-key` and `sleepcycle clips decrypt`, as a user runs them.
@Suite("audio clips: command line")
final class ClipsCommandTests {
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-clips") }

    static let fixture = AnalyzeCommandTests.repo.appendingPathComponent("Fixtures/example-night.flac").path

    /// The example night's own 16-bit values.
    static func exampleInts() throws -> [Int16] {
        try AnalyzeCommandTests.decodeExample().map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
    }

    /// The example night at `rate`, as 16-bit integers (resampled by the library, then rounded).
    static func example(at rate: Int) throws -> [Int16] {
        let samples = try AnalyzeCommandTests.decodeExample()
        guard rate != 16_000 else { return try exampleInts() }
        let resampler = try Resampler(inputRate: 16_000, outputRate: rate)
        var out: [Float] = []
        resampler.process(samples, into: &out)
        resampler.finish(into: &out)
        return out.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
    }

    static func writeWAV(_ path: String, rate: Int, samples: [Int16]) throws {
        var d = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + samples.count * 2); d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(samples.count * 2)
        samples.withUnsafeBytes { d.append(contentsOf: $0) }
        try d.write(to: URL(fileURLWithPath: path))
    }

    /// A FLAC (or any libsndfile file)'s first channel as 16-bit integers, and its rate.
    static func read16(_ path: String) throws -> (rate: Int, samples: [Int16]) {
        let file = try SndFile(reading: InputFile(path: path))
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 8192 * file.channels)
        defer { buffer.deallocate() }
        var out: [Int16] = []
        while true {
            let n = try file.readFloat(into: buffer, frames: 8192)
            for i in 0..<n { out.append(Int16((buffer[i * file.channels] * 32768).rounded())) }
            if n < 8192 { break }
        }
        return (file.sampleRate, out)
    }

    static func events(_ stdout: String) throws -> [[String: Any]] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
        return try #require(json["events"] as? [[String: Any]])
    }

    static func seconds(_ iso: Any?) -> Double {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return (iso as? String).flatMap { f.date(from: $0) }.map { $0.timeIntervalSince(f.date(from: "2000-01-01T22:00:00.000Z")!) } ?? -1
    }

    @Test(arguments: [8_000, 16_000, 44_100, 48_000])
    func everyChosenEventHasAClipOfTheSourcesOwnSamples(rate: Int) throws {
        let samples = try Self.example(at: rate)
        let wav = temp.path("night-\(rate).wav")
        try Self.writeWAV(wav, rate: rate, samples: samples)
        let dir = temp.path("clips-\(rate)")
        let r = try AnalyzeCommandTests.analyze([wav, "--clips", dir, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let events = try Self.events(r.stdout)
        let chosen = events.filter { ["snoring", "talking", "coughing"].contains($0["type"] as? String ?? "") }
        #expect(chosen.count >= 10, "the example night has snores at every rate")
        #expect(events.filter { $0["type"] as? String == "movement" }.allSatisfy { $0["clip"] == nil })
        for e in chosen {
            let path = try #require(e["clip"] as? String, "\(e)")
            let clip = try Self.read16(dir + "/" + path)
            #expect(clip.rate == rate)
            let first = try #require((e["clipStartFrame"] as? NSNumber)?.intValue)
            #expect(first >= 0 && first + clip.samples.count <= samples.count)
            #expect(clip.samples == Array(samples[first..<(first + clip.samples.count)]), "\(path) at \(rate) Hz")
            // The clip holds the event: 10 s around it, its times agreeing with its frames.
            let (start, end) = (Self.seconds(e["start"]), Self.seconds(e["end"]))
            let (clipStart, clipEnd) = (Self.seconds(e["clipStart"]), Self.seconds(e["clipEnd"]))
            #expect(clipStart <= start + 0.001 && clipEnd >= end - 0.001)
            #expect(abs(clipStart - Double(first) / Double(rate)) < 0.001)
            #expect(abs(Double(clip.samples.count) / Double(rate) - max(10, min(60, end - start))) < 0.05)
        }
        // Only the clips are written: one per chosen event, under the session's folder.
        let sessionId = try #require((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["sessionId"] as? String)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/" + sessionId)
        #expect(files.count == chosen.count && files.allSatisfy { $0.hasSuffix(".flac") })
    }

    /// Analysing the same recording again into the same folder (same session and event ids) with a tighter limit:
    /// the clips it gives up were the first run's, named by its result, and stay.
    /// A report written through a symbolic link into another folder: a browser resolves relative links from the name
    /// it opened (the link), so links relative to the link's target failed there. They are absolute `file:` URLs.
    @Test func aReportWrittenThroughALinkLinksItsClipsAbsolutely() throws {
        let clips = temp.path("clips"), real = temp.path("deep/real")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: temp.path("shown"), withIntermediateDirectories: true)
        let link = temp.path("shown/report.html")
        #expect(symlink(real + "/report.html", link) == 0)
        let r = try BuiltBinary.run(["analyze", Self.fixture, "--clips", clips, "--format", "html", "--output", link])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: real + "/report.html", encoding: .utf8)
        let sources = page.components(separatedBy: "<audio controls").dropFirst().compactMap { tag -> String? in
            guard let from = tag.range(of: "src=\""), let to = tag[from.upperBound...].firstIndex(of: "\"") else { return nil }
            return String(tag[from.upperBound..<to])
        }
        #expect(!sources.isEmpty)
        for src in sources {
            let url = try #require(URL(string: src))
            #expect(url.isFileURL && FileManager.default.fileExists(atPath: url.path), "\(src)")
        }
        // Written to a plain path, the links stay relative (the report and its clips move together).
        let plain = temp.path("shown/plain.html")
        _ = try BuiltBinary.run(["analyze", Self.fixture, "--clips", clips, "--format", "html", "--output", plain])
        let relative = try String(contentsOfFile: plain, encoding: .utf8)
        #expect(relative.contains("src=\"../clips/"))
    }

    @Test func aSecondRunNeverRemovesTheFirstRunsClips() throws {
        let dir = temp.path("clips-twice")
        let first = try AnalyzeCommandTests.analyze([Self.fixture, "--clips", dir, "--format", "json"])
        #expect(first.status == 0, "\(first.stderr)")
        let named = try Self.events(first.stdout).compactMap { $0["clip"] as? String }
        #expect(named.count >= 10)
        for limit in [["--clips-per-type", "1"], ["--clips-max-size", "1000"]] {
            let again = try AnalyzeCommandTests.analyze([Self.fixture, "--clips", dir, "--format", "json"] + limit)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try Self.events(again.stdout).compactMap { $0["clip"] as? String }.count < named.count)
            for path in named {
                #expect(FileManager.default.fileExists(atPath: dir + "/" + path), "\(limit): \(path) was removed")
            }
        }
    }

    /// With two sleepers the per-type limit is per sleeper: night-wide, all of a type's clips could go to one of them
    /// (the primary sleeper's snores had none).
    @Test func thePerTypeLimitIsPerSleeper() throws {
        let two = AnalyzeCommandTests.repo.appendingPathComponent("Fixtures/two-sleepers.flac").path
        let r = try AnalyzeCommandTests.analyze([two, "--channel-separation", "bedside", "--clips", temp.path("two"),
                                                 "--clips-per-type", "1", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let sessions = try #require(json["sessions"] as? [[String: Any]])
        #expect(sessions.count == 2)
        for session in sessions {
            let events = session["events"] as? [[String: Any]] ?? []
            let snores = events.filter { $0["type"] as? String == "snoring" }
            #expect(snores.count > 1)
            #expect(snores.filter { $0["clip"] != nil }.count == 1, "\(snores)")
            let clipped = Dictionary(grouping: events.filter { $0["clip"] != nil }, by: { $0["type"] as? String ?? "" })
            #expect(clipped.values.allSatisfy { $0.count == 1 })
        }
        #expect(r.stderr.contains("limit 1 per type and sleeper"), "\(r.stderr)")
    }

    @Test func encryptedClipsDecryptWithTheirKeyOnly() throws {
        let key = temp.path("clips.key")
        try Data((String(repeating: "0123456789abcdef", count: 4) + "\n").utf8).write(to: URL(fileURLWithPath: key))
        let dir = temp.path("clips")
        let r = try AnalyzeCommandTests.analyze([Self.fixture, "--clips", dir, "--clips-key", key, "--clip-types",
                                                 "snoring", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let events = try Self.events(r.stdout)
        let snores = events.filter { $0["type"] as? String == "snoring" }
        #expect(!snores.isEmpty && snores.allSatisfy { ($0["clip"] as? String)?.hasSuffix(".flac.enc") == true })
        #expect(events.filter { $0["type"] as? String != "snoring" }.allSatisfy { $0["clip"] == nil })
        let all = FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []
        #expect(!all.contains { $0.hasSuffix(".flac") || $0.hasSuffix(".tmp") })
        let source = try Self.exampleInts()
        let event = snores[0]
        let sealed = dir + "/" + (event["clip"] as? String ?? "")
        let out = temp.path("decrypted.flac")
        let d = try BuiltBinary.run(["clips", "decrypt", sealed, "--key", key, "--output", out])
        #expect(d.status == 0 && d.stderr.isEmpty, "\(d.stderr)")
        let clip = try Self.read16(out)
        let first = (event["clipStartFrame"] as? NSNumber)?.intValue ?? -1
        #expect(clip.samples == Array(source[first..<(first + clip.samples.count)]))

        // A wrong key, a changed byte, a file that is not a clip: one line, status 65, nothing written.
        let wrong = temp.path("wrong.key")
        try Data((0..<32).map { UInt8($0) }).write(to: URL(fileURLWithPath: wrong))
        let tampered = temp.path("tampered.flac.enc")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: sealed))
        bytes[bytes.count / 2] ^= 1
        try bytes.write(to: URL(fileURLWithPath: tampered))
        for (file, k) in [(sealed, wrong), (tampered, key), (Self.fixture, key)] {
            let target = temp.path("never.flac")
            let bad = try BuiltBinary.run(["clips", "decrypt", file, "--key", k, "--output", target])
            #expect(bad.status == 65, "\(bad.stderr)")
            #expect(bad.stderr.split(separator: "\n").count == 1 && bad.stderr.contains((file as NSString).lastPathComponent))
            #expect(!FileManager.default.fileExists(atPath: target))
        }
        let missing = try BuiltBinary.run(["clips", "decrypt", sealed, "--key", temp.path("none.key"), "--output", out])
        #expect(missing.status == 66 && missing.stderr.contains("none.key"))
    }

    /// A key file whose name is not UTF-8 opens (file names are bytes).
    @Test func aKeyFileNamedInBytesThatAreNotUTF8Opens() throws {
        let dir = temp.path("bytes")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = try BuiltBinary.shell("cd '\(dir)' && printf '%064d' 7 > \"$(printf 'k\\377.key')\" && "
            + "\"$0\" analyze '\(Self.fixture)' --clips clips --clips-key \"$(printf 'k\\377.key')\" --format json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(".flac.enc"))
    }

    @Test func badClipOptionsAreOneLineErrors() throws {
        let file = temp.path("a-file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let shortKey = temp.path("short.key")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: shortKey))
        let loop = temp.path("loop-a")
        _ = symlink(temp.path("loop-b"), loop); _ = symlink(loop, temp.path("loop-b"))
        _ = symlink(temp.path("nowhere/clips"), temp.path("dangling"))
        for (args, status, needle) in [
            (["--clips", loop], Int32(73), "a loop of symbolic links"),
            (["--clips", temp.path("dangling")], 73, "a symbolic link to a missing folder"),
            (["--clips", ""], 64, "path is empty"),
            (["--clips", file], Int32(73), "a-file"),
            (["--clips", temp.path("c"), "--clip-types", "sneezing"], 64, "sneezing"),
            (["--clips-key", shortKey], 64, "--clips"),
            (["--clips", temp.path("c"), "--clips-key", shortKey], 65, "short.key"),
            (["--clips", temp.path("c"), "--clips-key", temp.path("nokey")], 66, "nokey"),
            (["--clips", temp.path("c"), "--clips-max-size", "lots"], 64, "size"),
            (["--clips", temp.path("c"), "--clip-pre-roll", "20s", "--clip-length", "30s"], 64,
             "--clip-pre-roll 20 s must be at least the clip length (30 s)"),
        ] {
            let r = try AnalyzeCommandTests.analyze([Self.fixture, "--format", "json"] + args)
            #expect(r.status == status, "\(args): \(r.stderr)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(needle), "\(r.stderr)")
        }
        // Nothing is made for an input that cannot be read.
        let missing = try AnalyzeCommandTests.analyze([temp.path("none.wav"), "--clips", temp.path("new/clips")])
        #expect(missing.status == 66 && !FileManager.default.fileExists(atPath: temp.path("new")))
    }

    @Test func aRecordedNightsClipsGoWithTheNight() throws {
        let store = temp.path("nights.sqlite"), dir = temp.path("clips")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir + "/notes.txt"))
        let r = try BuiltBinary.run(["record"] + RecordCommandTests.rawArgs + ["--store", store, "--start",
                                    RecordCommandTests.start, "--clips", dir, "--format", "json"],
                                    stdin: try RecordCommandTests.rawNight())
        #expect(r.status == 0, "\(r.stderr)")
        let events = try Self.events(r.stdout)
        let clips = events.compactMap { $0["clip"] as? String }
        #expect(clips.count >= 10)
        #expect(clips.allSatisfy { FileManager.default.fileExists(atPath: dir + "/" + $0) })
        // The stored night shows the same clips.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let id = try #require(json["sessionId"] as? String)
        let shown = try BuiltBinary.run(["sessions", "show", id, "--store", store, "--format", "json"])
        #expect(try Self.events(shown.stdout).compactMap { $0["clip"] as? String } == clips)
        // Deleting the night removes its clips and their folder, nothing else.
        let deleted = try BuiltBinary.run(["sessions", "delete", id, "--store", store])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(clips.allSatisfy { !FileManager.default.fileExists(atPath: dir + "/" + $0) })
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + id))
        #expect(FileManager.default.fileExists(atPath: dir + "/notes.txt"))
    }

    /// The clips index names files by absolute path, so a copy of a store lists the original's clips: deleting the
    /// night from the copy keeps them (with a warning naming the original); from a moved store it removes them.
    @Test func aCopyOfTheStoreLeavesTheOriginalsClips() throws {
        let store = temp.path("nights.sqlite"), copy = temp.path("backup.sqlite"), moved = temp.path("moved.sqlite")
        let dir = temp.path("clips")
        let r = try BuiltBinary.run(["record"] + RecordCommandTests.rawArgs + ["--store", store, "--start",
                                    RecordCommandTests.start, "--clips", dir, "--format", "json"],
                                    stdin: try RecordCommandTests.rawNight())
        #expect(r.status == 0, "\(r.stderr)")
        let clips = try Self.events(r.stdout).compactMap { $0["clip"] as? String }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let id = try #require(json["sessionId"] as? String)
        #expect(!clips.isEmpty)
        let second = temp.path("second.sqlite")
        for target in [copy, second] {
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: store + suffix) {
                try FileManager.default.copyItem(atPath: store + suffix, toPath: target + suffix)
            }
        }
        let fromCopy = try BuiltBinary.run(["sessions", "delete", id, "--store", copy])
        #expect(fromCopy.status == 0, "\(fromCopy.stderr)")
        #expect(fromCopy.stderr.contains("its \(clips.count) clip files kept") && fromCopy.stderr.contains(store),
                "\(fromCopy.stderr)")
        #expect(clips.allSatisfy { FileManager.default.fileExists(atPath: dir + "/" + $0) })
        #expect(try BuiltBinary.run(["sessions", "list", "--store", copy]).stdout.contains("no nights stored"))
        // The original, moved: nobody else lists the clips any more.
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store + suffix) {
            try FileManager.default.moveItem(atPath: store + suffix, toPath: moved + suffix)
        }
        let fromMoved = try BuiltBinary.run(["sessions", "delete", id, "--store", moved])
        #expect(fromMoved.status == 0 && !fromMoved.stderr.contains("kept"), "\(fromMoved.stderr)")
        #expect(clips.allSatisfy { !FileManager.default.fileExists(atPath: dir + "/" + $0) })
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + id))
        // A copy that still holds the night: its report lists the clips as not found, with no player.
        let page = try BuiltBinary.run(["sessions", "show", id, "--store", second, "--format", "html"])
        #expect(page.status == 0 && !page.stdout.contains("<audio"), "\(page.stderr)")
        #expect(page.stdout.components(separatedBy: "(file not found)").count == clips.count + 1)
    }
}
