import Foundation
import Testing

/// Runs the built `sleepcycle analyze` on WAV files written by the test (PCM16, minimal RIFF header).
@Suite("analyze: command line")
final class AnalyzeCommandTests {
    /// This test's files (removed after it).
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-analyze") }

    static func analyze(_ args: [String]) throws -> BuiltBinary.Run {
        try BuiltBinary.run(["analyze"] + args)
    }

    /// Writes a PCM16 WAV (interleaved `channels`) into a fresh folder of this test's and returns its path.
    func writeWAV(name: String, rate: Int, channels: [[Float]]) throws -> String {
        let dir = temp.url.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let frames = channels[0].count, nc = channels.count
        var d = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + frames * nc * 2); d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(nc); u32(rate); u32(rate * nc * 2); u16(nc * 2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(frames * nc * 2)
        var pcm = [Int16](repeating: 0, count: frames * nc)
        for i in 0..<frames { for c in 0..<nc { pcm[i * nc + c] = Int16(max(-1, min(1, channels[c][i])) * 32767) } }
        pcm.withUnsafeBytes { d.append(contentsOf: $0) }
        let path = dir.appendingPathComponent(name).path
        try d.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// 4 s of noise, 3 s of digital silence, 3 s of noise.
    static func night(rate: Int = 16_000) -> [Float] {
        var s: UInt64 = 0x2545F4914F6CDD1D
        func noise(_ n: Int) -> [Float] {
            (0..<n).map { _ in s ^= s << 13; s ^= s >> 7; s ^= s << 17; return Float(s % 20_001) / 100_000 - 0.1 }
        }
        return noise(4 * rate) + [Float](repeating: 0, count: 3 * rate) + noise(3 * rate)
    }

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
    }
}
