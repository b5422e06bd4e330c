import Foundation
import SleepCycleAudio
import Testing

/// Runs the built `sleepcycle analyze` on WAV files written by the test (PCM16, minimal RIFF header).
@Suite("analyze: command line")
final class AnalyzeCommandTests {
    /// This test's files (removed after it).
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-analyze") }

    static func analyze(_ args: [String], stdin: Data? = nil) throws -> BuiltBinary.Run {
        try BuiltBinary.run(["analyze"] + args, stdin: stdin)
    }

    /// Writes a PCM16 WAV (interleaved `channels`) into a fresh folder of this test's and returns its path.
    func writeWAV(name: String, rate: Int, channels: [[Float]]) throws -> String {
        let dir = temp.url.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let d = TestWAV.pcm16(rate: rate, channels: channels)
        let path = dir.appendingPathComponent(name).path
        try d.write(to: URL(fileURLWithPath: path))
        return path
    }

    static func night(rate: Int = 16_000) -> [Float] { TestWAV.night(rate: rate) }

    @Test func jsonIsTheContractAndByteIdenticalAcrossRunsAndCopies() throws {
        let path = try writeWAV(name: "night.wav", rate: 16_000, channels: [Self.night()])
        let a = try Self.analyze([path, "--format", "json", "--no-progress"])
        #expect(a.status == 0, "\(a.stderr)")
        #expect(a.stderr.isEmpty)
        let b = try Self.analyze([path, "--format", "json"])
        #expect(a.stdout == b.stdout)
        // Same name and size in another folder: same session id and bytes except the path.
        let copy = try writeWAV(name: "night.wav", rate: 16_000, channels: [Self.night()])
        let c = try Self.analyze([copy, "--format", "json"])
        #expect(c.stdout.replacingOccurrences(of: copy, with: path) == a.stdout)

        let json = try #require(try JSONSerialization.jsonObject(with: Data(a.stdout.utf8)) as? [String: Any])
        #expect(json["startTime"] as? String == "2000-01-01T22:00:00.000Z")
        #expect(json["endTime"] as? String == "2000-01-01T22:00:10.000Z")
        let source = try #require(json["source"] as? [String: Any])
        #expect(source["sampleRate"] as? Int == 16_000)
        #expect(source["channels"] as? Int == 1)
        #expect(source["durationSec"] as? Double == 10)
        let id = try #require(json["sessionId"] as? String)
        #expect(UUID(uuidString: id) != nil && id[id.index(id.startIndex, offsetBy: 14)] == "5")   // version 5
        let health = try #require((json["audioStatistics"] as? [String: Any])?["healthIntervals"] as? [[String: String]])
        #expect(health.map { $0["status"] } == ["healthy", "flatline", "healthy"])
        #expect(health[1]["start"] == "2000-01-01T22:00:04.000Z" || health[1]["start"] == "2000-01-01T22:00:04.001Z")
        #expect(health[2]["start"] == "2000-01-01T22:00:07.000Z")
        let stats = try #require(json["statistics"] as? [String: Any])
        #expect(stats["finalWakeTime"] is NSNull)
    }

    @Test func startOptionMovesTheTimelineAndTheSessionId() throws {
        let path = try writeWAV(name: "n.wav", rate: 16_000, channels: [Self.night()])
        let a = try Self.analyze([path, "--format", "json", "--start", "2026-01-01T23:00:00Z"])
        #expect(a.status == 0, "\(a.stderr)")
        #expect(a.stdout.contains("\"startTime\": \"2026-01-01T23:00:00.000Z\""))
        #expect(a.stdout.contains("\"endTime\": \"2026-01-01T23:00:10.000Z\""))
        let b = try Self.analyze([path, "--format", "json"])
        let idA = a.stdout.split(separator: "\n")[1], idB = b.stdout.split(separator: "\n")[1]
        #expect(idA.contains("sessionId") && idA != idB)
        let bad = try Self.analyze([path, "--start", "tomorrow"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--start"))
    }

    @Test func textSummaryAndOutputFile() throws {
        let path = try writeWAV(name: "stereo.wav", rate: 44_100,
                                     channels: [Self.night(rate: 44_100), Self.night(rate: 44_100).map { $0 * 0.5 }])
        let out = (path as NSString).deletingLastPathComponent + "/summary.txt"
        let r = try Self.analyze([path, "--output", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.contains("Night of 2000-01-01"))
        #expect(text.contains("44100 Hz, 2 channels"))
        #expect(text.contains("flatline [primary]"))
        #expect(text.contains("flatline [secondary]"))
    }

    @Test func badInputGivesOneLineNamingTheFileAndNonZeroExit() throws {
        let dir = temp.url
        let notAudio = dir.appendingPathComponent("notes.wav").path
        try Data("this is not audio\n".utf8).write(to: URL(fileURLWithPath: notAudio))
        for path in [notAudio, dir.appendingPathComponent("missing.flac").path] {
            let r = try Self.analyze([path, "--format", "json"])
            #expect(r.status != 0)
            #expect(r.stdout.isEmpty)
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(r.stderr)")
            #expect(lines.first?.hasPrefix(path + ":") == true, "\(r.stderr)")
        }
        // A folder on standard input (`analyze - < dir`) is a folder, not "not a recognised audio file".
        let folder = try #require(FileHandle(forReadingAtPath: dir.path))
        let r = try BuiltBinary.run(["analyze", "-"], stdinFile: folder)
        #expect(r.status == 66 && r.stderr == "-: is a directory (expected an audio stream)\n", "\(r.stderr)")
    }

    /// `--start` with an offset: `--alarm` is read in that offset (it was read in UTC), and the text summary shows
    /// clock times in it.
    @Test func alarmAndTextSummaryUseTheStartOffset() throws {
        let path = try writeWAV(name: "n.wav", rate: 16_000, channels: [Self.night()])
        let r = try Self.analyze([path, "--format", "json", "--start", "2026-01-01T23:00:00+0100", "--alarm", "23:01",
                                  "--alarm-window", "30s"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let alarm = try #require(json["smartAlarm"] as? [String: Any])
        #expect(alarm["alarmTime"] as? String == "2026-01-01T22:01:00.000Z")     // 23:01 at +01:00
        #expect(json["utcOffset"] as? String == "+01:00")
        #expect(json["startTime"] as? String == "2026-01-01T22:00:00.000Z")
        let text = try Self.analyze([path, "--start", "2026-01-01T23:00:00+01:00", "--alarm", "23:01"])
        #expect(text.stdout.contains("recording   23:00:00 → 23:00:10 UTC+01:00"), "\(text.stdout)")
        #expect(text.stdout.contains("window      22:31:00 → 23:01:00 UTC+01:00"), "\(text.stdout)")
        #expect(text.stdout.hasPrefix("Night of 2026-01-01"))
    }

    /// A night of digital silence or of a DC offset has no usable audio: no sleep is scored (it came out as 100 %).
    @Test func aSilentOrDCNightIsNotScoredAsSleep() throws {
        for (name, value) in [("silent.wav", Float(0)), ("dc.wav", Float(0.25))] {
            let path = try writeWAV(name: name, rate: 16_000, channels: [[Float](repeating: value, count: 16_000 * 180)])
            let r = try Self.analyze([path, "--format", "json"])
            #expect(r.status == 0, "\(r.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let stats = try #require(json["statistics"] as? [String: Any])
            #expect(stats["finalWakeTime"] is NSNull, "\(name)")
            #expect(stats["totalSleepDuration"] as? Double == 0, "\(name)")
            #expect((json["sleepStageIntervals"] as? [Any])?.isEmpty == true, "\(name)")
            let text = try Self.analyze([path])
            #expect(text.stdout.contains("no sleep scored (no usable audio"), "\(text.stdout)")
        }
    }

    /// A stereo night with the same sound on both microphones: the text summary counts each sound once.
    @Test func stereoSummaryCountsASoundOnce() throws {
        let example = Self.repo.appendingPathComponent("Fixtures/example-night.flac").path
        let mono = try Self.analyze([example, "--format", "json"])
        let monoJSON = try #require(try JSONSerialization.jsonObject(with: Data(mono.stdout.utf8)) as? [String: Any])
        let snores = (monoJSON["events"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "snoring" }.count
        #expect(snores > 5)
        // The example night on both channels (the right one 6 dB quieter): a stereo WAV.
        let samples = try Self.decodeExample()
        let path = try writeWAV(name: "stereo.wav", rate: 16_000, channels: [samples, samples.map { $0 * 0.5 }])
        let text = try Self.analyze([path])
        #expect(text.status == 0, "\(text.stderr)")
        let line = try #require(text.stdout.split(separator: "\n").first { $0.contains("snoring ") && $0.contains("event") })
        let count = Int(line.split(separator: " ").first { Int($0) != nil } ?? "") ?? -1
        #expect(abs(count - snores) <= 2, "\(line) against \(snores) mono snores")
    }

    /// Events end within the recording (an event still open at the end is closed at `endTime`).
    @Test func eventsNeverEndAfterTheRecording() throws {
        let example = Self.repo.appendingPathComponent("Fixtures/example-night.flac").path
        let samples = try Self.decodeExample()
        // Cut the night in the middle of its snoring bout (36–100 s).
        let path = try writeWAV(name: "cut.wav", rate: 16_000, channels: [Array(samples.prefix(16_000 * 60))])
        for file in [example, path] {
            let r = try Self.analyze([file, "--format", "json"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let end = try #require(json["endTime"] as? String)
            for e in json["events"] as? [[String: Any]] ?? [] {
                #expect((e["end"] as? String ?? "") <= end, "\(e) after \(end)")
            }
        }
    }

    /// A FLAC whose STREAMINFO declares fewer samples than it holds (a short count written by an encoder or editor)
    /// is the whole night: the same events, and the duration the audio has, not the one declared.
    @Test func aFLACWithAShortDeclaredLengthIsAnalysedWhole() throws {
        let example = Self.repo.appendingPathComponent("Fixtures/example-night.flac").path
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: example)))
        // STREAMINFO's body starts at byte 8; its 36-bit total_samples begins in the low nibble of body byte 13.
        bytes[21] &= 0xF0
        for i in 22...25 { bytes[i] = 0 }
        bytes[25] = 100
        let path = temp.url.appendingPathComponent("short-total.flac").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let whole = try Self.analyze([example, "--format", "json"])
        let short = try Self.analyze([path, "--format", "json"])
        #expect(short.status == 0 && short.stderr.isEmpty, "\(short.stderr)")
        #expect(short.stdout.replacingOccurrences(of: path, with: example).components(separatedBy: "\"events\"").last
                == whole.stdout.components(separatedBy: "\"events\"").last)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(short.stdout.utf8)) as? [String: Any])
        let source = try #require(json["source"] as? [String: Any])
        let wholeJSON = try #require(try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as? [String: Any])
        #expect(source["durationSec"] as? Double == (wholeJSON["source"] as? [String: Any])?["durationSec"] as? Double)
        #expect(json["endTime"] as? String == wholeJSON["endTime"] as? String)
    }

    /// `analyze -` reads the recording from standard input: a pipe and a redirected file give the same result,
    /// and the same session id (the contract's name, size and content digest, with the name `-`).
    @Test func standardInputIsTheRecording() throws {
        let example = Self.repo.appendingPathComponent("Fixtures/example-night.flac").path
        let data = try Data(contentsOf: URL(fileURLWithPath: example))
        let piped = try Self.analyze(["-", "--format", "json"] + [], stdin: data)
        #expect(piped.status == 0, "\(piped.stderr)")
        let handle = try #require(FileHandle(forReadingAtPath: example))
        let redirected = try BuiltBinary.run(["analyze", "-", "--format", "json"], stdinFile: handle)
        #expect(redirected.status == 0 && redirected.stdout == piped.stdout, "\(redirected.stderr)")
        #expect(piped.stdout.contains("\"path\": \"-\""))
        let fromPath = try Self.analyze([example, "--format", "json"])
        let events = { (s: String) in s.components(separatedBy: "\"events\"")[1] }
        #expect(events(fromPath.stdout) == events(piped.stdout))
        // Another stream gives another id.
        let other = try Self.analyze(["-", "--format", "json"], stdin: data + Data(count: 100))
        #expect(other.stdout.split(separator: "\n")[1] != piped.stdout.split(separator: "\n")[1])
        // An empty stream and two inputs on standard input are one-line errors.
        let empty = try Self.analyze(["-"], stdin: Data())
        #expect(empty.status == 65 && empty.stderr.split(separator: "\n").count == 1, "\(empty.stderr)")
        let twice = try Self.analyze(["-", "--hr", "-"], stdin: data)
        #expect(twice.status == 64, "\(twice.stderr)")
    }

    /// One NaN, infinity or huge value in a float WAV ended event detection for the rest of the night (0 events
    /// instead of 22), silently. Now the sample is replaced, counted and reported, and the night analysed normally.
    @Test(arguments: [Float.nan, .infinity, -.infinity, 1e30])
    func oneBadFloatSampleDoesNotEndTheNight(_ bad: Float) throws {
        let samples = try Self.decodeExample()
        let dir = temp.url.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let clean = dir.appendingPathComponent("clean.wav").path
        try TestWAV.float32(rate: 16_000, channels: [samples]).write(to: URL(fileURLWithPath: clean))
        var damaged = samples
        damaged[16_000 * 30] = bad                      // 30 s in, before the snoring bout
        let path = dir.appendingPathComponent("bad.wav").path
        try TestWAV.float32(rate: 16_000, channels: [damaged]).write(to: URL(fileURLWithPath: path))
        func events(_ file: String) throws -> (Int, [String: Any]) {
            let r = try Self.analyze([file, "--format", "json"])
            #expect(r.status == 0, "\(r.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            return ((json["events"] as? [Any])?.count ?? -1, json)
        }
        let (cleanCount, _) = try events(clean)
        let (badCount, json) = try events(path)
        #expect(cleanCount >= 15)   // the bout's 15 snores and more
        #expect(abs(badCount - cleanCount) <= 1, "\(badCount) events against \(cleanCount)")
        let warnings = try #require(json["warnings"] as? [[String: Any]])
        #expect(warnings.contains { $0["code"] as? String == "invalidSamples" }, "\(warnings)")
        let run = try Self.analyze([path])
        #expect(run.stderr.hasPrefix("warning: ") && run.stderr.contains("replaced"), "\(run.stderr)")
    }

    /// The example night as a laptop microphone hears it (`conditions.py`'s `laptop` response: 4th-order high-pass
    /// at 300 Hz and low-pass at 6.5 kHz, +6 dB at 1.2 kHz, −6 dB at 4.5 kHz; labels: movement 18–24 s, snoring
    /// 36–100 s, talking 128–131.9 s, coughs at 110 and 150 s): most of the snoring bout is still heard and nothing is
    /// invented. The built-in model finds 19 snores in the dry night and 15 here, and loses the talking here (the
    /// weakness "Unseen conditions" in docs/0005-event-detection.md measures); a model that hears less than 14 of
    /// them, or reports a sound where the night has none, fails.
    @Test func aLaptopMicrophoneStillHearsTheExampleNight() throws {
        var filters = [RBJ.highPass(300), .highPass(300), .lowPass(6500), .lowPass(6500),
                       .peak(1200, gainDb: 6, q: 2), .peak(4500, gainDb: -6, q: 2)]
        let laptop = try Self.decodeExample().map { x in
            var y = x
            for i in filters.indices { y = filters[i].process(y) }
            return y
        }
        let path = try writeWAV(name: "laptop.wav", rate: 16_000, channels: [laptop])
        let r = try Self.analyze([path, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func date(_ value: Any?) throws -> Date {
            let text = value as? String ?? ""
            return try #require(fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text), "\(text)")
        }
        let t0 = try date(json["startTime"])
        let events = try (json["events"] as? [[String: Any]] ?? []).map { e in
            (e["type"] as? String ?? "", try date(e["start"]).timeIntervalSince(t0), try date(e["end"]).timeIntervalSince(t0))
        }
        let snores = events.filter { $0.0 == "snoring" }
        #expect(snores.count >= 14, "\(snores.count) snores")
        // Every event lies on a labelled sound (±2 s): movement, the bout, the talking or a cough.
        let labelled: [(Double, Double)] = [(18, 24), (36, 100), (110, 112.5), (128, 131.92), (150, 150.6)]
        for e in events {
            #expect(labelled.contains { e.1 < $0.1 + 2 && e.2 > $0.0 - 2 }, "\(e) is on no labelled sound")
        }
    }

    /// A biquad of the Audio EQ Cookbook (R. Bristow-Johnson), transposed direct form II, at 16 kHz.
    struct RBJ {
        var b: (Double, Double, Double), a: (Double, Double), z = (0.0, 0.0)
        static func pass(_ f: Double, high: Bool) -> RBJ {
            let w = 2 * Double.pi * f / 16_000, alpha = sin(w) / (2 / 2.0.squareRoot()), c = cos(w), a0 = 1 + alpha
            let n = high ? ((1 + c) / 2, -(1 + c), (1 + c) / 2) : ((1 - c) / 2, 1 - c, (1 - c) / 2)
            return RBJ(b: (n.0 / a0, n.1 / a0, n.2 / a0), a: (-2 * c / a0, (1 - alpha) / a0))
        }
        static func highPass(_ f: Double) -> RBJ { pass(f, high: true) }
        static func lowPass(_ f: Double) -> RBJ { pass(f, high: false) }
        static func peak(_ f: Double, gainDb: Double, q: Double) -> RBJ {
            let g = pow(10, gainDb / 40), w = 2 * Double.pi * f / 16_000, alpha = sin(w) / (2 * q), c = cos(w)
            let a0 = 1 + alpha / g
            return RBJ(b: ((1 + alpha * g) / a0, -2 * c / a0, (1 - alpha * g) / a0), a: (-2 * c / a0, (1 - alpha / g) / a0))
        }
        mutating func process(_ x: Float) -> Float {
            let x = Double(x), y = b.0 * x + z.0
            z = (b.1 * x - a.0 * y + z.1, b.2 * x - a.1 * y)
            return Float(y)
        }
    }

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The example night's samples (16 kHz mono), decoded by the library.
    static func decodeExample() throws -> [Float] {
        let source = try AudioFileSource(path: repo.appendingPathComponent("Fixtures/example-night.flac").path)
        var samples: [Float] = []
        while case .audio(_, let channels) = try source.read() { samples += channels[0] }
        return samples
    }
}
