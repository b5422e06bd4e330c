import Foundation
import SleepCycleAudio
import SleepCycleStore
import Testing

/// `--channel-separation` on `analyze` and `record`, as a user runs them.
@Suite("two sleepers: command line")
final class TwoSleeperCommandTests {
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-two") }

    static let fixture = AnalyzeCommandTests.repo.appendingPathComponent("Fixtures/two-sleepers.flac").path

    static func sessions(_ stdout: String) throws -> [[String: Any]] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
        return try #require(json["sessions"] as? [[String: Any]])
    }

    @Test func stereoJSONHasASessionPerSleeperAndIsDeterministic() throws {
        let a = try AnalyzeCommandTests.analyze([Self.fixture, "--channel-separation", "bedside", "--format", "json"])
        #expect(a.status == 0, "\(a.stderr)")
        let b = try AnalyzeCommandTests.analyze([Self.fixture, "--channel-separation", "bedside", "--format", "json"])
        #expect(a.stdout == b.stdout)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(a.stdout.utf8)) as? [String: Any])
        #expect((json["channelSeparation"] as? [String: Any])?["preset"] as? String == "bedside")
        let sessions = try Self.sessions(a.stdout)
        #expect(sessions.map { $0["channel"] as? String } == ["primary", "secondary"])
        // Both sleepers snore in the fixture, and every event is in one session only.
        for s in sessions {
            let events = try #require(s["events"] as? [[String: Any]])
            #expect(events.contains { $0["type"] as? String == "snoring" })
            #expect(events.allSatisfy { ($0["attributionConfidence"] as? Double).map { (0.5...1).contains($0) } == true })
            #expect(events.allSatisfy { $0["channel"] as? String == s["channel"] as? String })
        }
        // No sound is reported twice as the same thing. Two events may share a start: at 68 s the secondary talks
        // (labelled 68-73 s) during the primary's snoring bout, and each channel's detector cuts that sound alike.
        let starts = sessions.flatMap { ($0["events"] as? [[String: Any]] ?? []).compactMap { e in
            (e["start"] as? String).map { "\($0) \(e["type"] as? String ?? "")" }
        } }
        #expect(Set(starts).count == starts.count)
        // The labelled bouts: the primary snores from 36 s, the secondary until 40 s.
        let primaryStarts = (sessions[0]["events"] as? [[String: Any]] ?? []).compactMap { $0["start"] as? String }
        #expect(primaryStarts.filter { $0 >= "2000-01-01T22:00:45" && $0 < "2000-01-01T22:01:40" }.count >= 10)
        let secondaryStarts = (sessions[1]["events"] as? [[String: Any]] ?? []).compactMap { $0["start"] as? String }
        #expect(secondaryStarts.filter { $0 < "2000-01-01T22:00:34" }.count >= 6)
        // Text: a section per sleeper.
        let text = try AnalyzeCommandTests.analyze([Self.fixture, "--channel-separation", "centered"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Primary sleeper (left channel)") && text.stdout.contains("Secondary sleeper (right channel)"))
    }

    @Test func monoInputAndBadSettingsAreOneLineErrors() throws {
        let mono = AnalyzeCommandTests.repo.appendingPathComponent("Fixtures/example-night.flac").path
        let r = try AnalyzeCommandTests.analyze([mono, "--channel-separation", "bedside"])
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("example-night.flac")
                && r.stderr.contains("stereo"), "\(r.stderr)")
        let bad = temp.path("settings.json")
        for (content, needle) in [("{\"microphoneDistance\": 40}", "microphone distance"),
                                  ("{\"nonsense\": 1}", "unknown channel-separation setting 'nonsense'"),
                                  ("[1, 2]", "JSON object"), ("{\"perEventType\": {\"sneezing\": {}}}", "sneezing"),
                                  ("{\"microphoneDistance\": 5, \"speedOfSound\": 300}", "at most 4.76 m"),
                                  ("{\"microphoneDistance\": \"far\"}", "'microphoneDistance' must be a number"),
                                  ("{\"levelWeight\": 1e308, \"timeWeight\": 1e308}", "cue weights must be 0…1000"),
                                  ("{\"perEventType\": 3}", "'perEventType' must be an object"),
                                  ("{\"microphoneDistance\": ", "not valid JSON")] {
            try Data(content.utf8).write(to: URL(fileURLWithPath: bad))
            let e = try AnalyzeCommandTests.analyze([Self.fixture, "--channel-separation", "bedside",
                                                     "--channel-separation-config", bad])
            #expect(e.status == 64, "\(content): \(e.stderr)")
            #expect(e.stderr.split(separator: "\n").count == 1 && e.stderr.contains(bad) && e.stderr.contains(needle)
                    && !e.stderr.contains("Domain") && !e.stderr.contains("DecodingError"), "\(content): \(e.stderr)")
        }
        // A settings file that cannot be opened is a missing input (66), with the system's reason.
        let missing = try AnalyzeCommandTests.analyze([Self.fixture, "--channel-separation", "bedside",
                                                       "--channel-separation-config", temp.path("none.json")])
        #expect(missing.status == 66 && missing.stderr.contains("none.json: no such file"), "\(missing.stderr)")
        try Data("{\"microphoneDistance\": 1.5, \"perEventType\": {\"talking\": {\"timeWeight\": 0.5}}}".utf8)
            .write(to: URL(fileURLWithPath: bad))
        let ok = try AnalyzeCommandTests.analyze([Self.fixture, "--channel-separation", "bedside",
                                                  "--channel-separation-config", bad, "--format", "json"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("\"microphoneDistance\": 1.5"))
    }

    @Test func recordKeepsBothSleepersAndShowPrintsThem() throws {
        // The fixture as raw interleaved s16le on standard input.
        let source = try AudioFileSourceSamples.read(Self.fixture)
        var pcm = [Int16](); pcm.reserveCapacity(source[0].count * 2)
        for i in 0..<source[0].count {
            for c in 0..<2 { pcm.append(Int16(max(-32768, min(32767, (source[c][i] * 32768).rounded())))) }
        }
        let store = temp.path("nights.sqlite")
        let r = try BuiltBinary.run(["record", "--input", "-", "--input-format", "s16le", "--rate", "16000", "--channels", "2",
                                     "--channel-separation", "bedside", "--store", store, "--start", "2000-01-01T22:00:00Z",
                                     "--format", "json", "--no-status"],
                                    stdin: pcm.withUnsafeBytes { Data($0) })
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try Self.sessions(r.stdout)
        #expect(sessions.count == 2)
        let analyzed = try AnalyzeCommandTests.analyze([Self.fixture, "--channel-separation", "bedside", "--format", "json"])
        let analyzedSessions = try Self.sessions(analyzed.stdout)
        for (a, b) in zip(sessions, analyzedSessions) {
            let types = { (s: [String: Any]) in (s["events"] as? [[String: Any]] ?? []).map { "\($0["type"]!) \($0["start"]!)" } }
            #expect(types(a) == types(b))
        }
        let id = try #require(sessions[0]["sessionId"] as? String)
        let shown = try BuiltBinary.run(["sessions", "show", id, "--store", store, "--format", "json"])
        #expect(shown.status == 0 && shown.stdout == r.stdout, "\(shown.stderr)")
        let text = try BuiltBinary.run(["sessions", "show", id, "--store", store])
        #expect(text.status == 0 && text.stdout.contains("Secondary sleeper"))
        // The secondary sleeper's session id, which `show` prints, names the night too.
        let secondaryId = try #require(sessions[1]["sessionId"] as? String)
        #expect(text.stdout.contains(secondaryId))
        let bySecondary = try BuiltBinary.run(["sessions", "show", secondaryId, "--store", store, "--format", "json"])
        #expect(bySecondary.status == 0 && bySecondary.stdout == r.stdout, "\(bySecondary.stderr)")
        // `sessions list` gives the primary sleeper's statistics (as `sessions report` does), not both sleepers' sum.
        let listed = try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"])
        let nights = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        let statistics = try #require(nights.first?["statistics"] as? [String: Any])
        let primary = try #require(sessions[0]["statistics"] as? [String: Any])
        let secondary = try #require(sessions[1]["statistics"] as? [String: Any])
        #expect((secondary["snoreTime"] as? Double ?? 0) > 0, "the fixture's secondary sleeper snores too")
        for key in ["snoreTime", "snoreScore", "totalSleepDuration"] {
            #expect(statistics[key] as? Double == primary[key] as? Double, "\(key): \(statistics[key] ?? "nil")")
        }
        // The report `record` prints is the stored night's: `sessions show` prints the same page (the JSON rounds
        // probabilities to 3 decimals; the live page showed 0.86 where the stored one showed 0.85).
        let htmlStore = temp.path("html.sqlite")
        let page = try BuiltBinary.run(["record", "--input", "-", "--input-format", "s16le", "--rate", "16000", "--channels", "2",
                                        "--channel-separation", "bedside", "--store", htmlStore, "--start", "2000-01-01T22:00:00Z",
                                        "--format", "html", "--no-status"],
                                       stdin: pcm.withUnsafeBytes { Data($0) })
        let listedHTML = try BuiltBinary.run(["sessions", "list", "--store", htmlStore, "--format", "json"])
        let htmlNight = try #require(try JSONSerialization.jsonObject(with: Data(listedHTML.stdout.utf8)) as? [[String: Any]])
        let htmlId = try #require(htmlNight.first?["sessionId"] as? String)
        let shownPage = try BuiltBinary.run(["sessions", "show", htmlId, "--store", htmlStore, "--format", "html"])
        #expect(page.status == 0 && shownPage.status == 0 && page.stdout == shownPage.stdout)
        // Mono input with the option: refused before anything is recorded.
        let mono = try BuiltBinary.run(["record", "--input", "-", "--rate", "16000", "--channels", "1",
                                        "--channel-separation", "bedside", "--store", temp.path("other.sqlite")],
                                       stdin: Data(count: 3200))
        #expect(mono.status == 64 && mono.stderr.contains("stereo"), "\(mono.stderr)")
    }
}

/// Reads a whole file's samples (all channels) with the library's own reader.
enum AudioFileSourceSamples {
    static func read(_ path: String) throws -> [[Float]] {
        let source = try AudioFileSource(path: path)
        var channels: [[Float]] = []
        while case .audio(_, let block) = try source.read() {
            if channels.isEmpty { channels = block } else { for c in block.indices { channels[c] += block[c] } }
        }
        return channels
    }
}
