import Foundation
import Testing
import SleepCycleBus
@testable import SleepCycle

@Suite struct SupportTests {
    @Test func uuidV5MatchesTheRFCConstruction() {
        // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
        let dns = UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
        #expect(SessionIdentifier.uuidV5(namespace: dns, name: "python.org").uuidString.lowercased()
                == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
        let a = SessionIdentifier.forFile(name: "n.wav", size: 10, start: FileAnalysis.defaultStart)
        #expect(a == SessionIdentifier.forFile(name: "n.wav", size: 10, start: FileAnalysis.defaultStart))
        #expect(a != SessionIdentifier.forFile(name: "n.wav", size: 11, start: FileAnalysis.defaultStart))
        #expect(a != SessionIdentifier.forFile(name: "n.wav", size: 10, start: FileAnalysis.defaultStart + 0.001))
    }

    @Test func sha1KnownAnswers() {
        let hex = { (s: String) in SHA1.digest(Array(s.utf8)).map { String(format: "%02x", $0) }.joined() }
        #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(String(repeating: "a", count: 1000)) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
    }

    @Test func timestampsAreUTCMillisecondsBothWays() throws {
        #expect(ISO8601Milliseconds.string(from: FileAnalysis.defaultStart) == "2000-01-01T22:00:00.000Z")
        #expect(ISO8601Milliseconds.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Milliseconds.string(from: Date(timeIntervalSince1970: 951_782_400.0625)) == "2000-02-29T00:00:00.063Z")
        #expect(ISO8601Milliseconds.string(from: Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        let d = try #require(ISO8601Milliseconds.date(from: "2026-01-01T23:00:00+01:00"))
        #expect(ISO8601Milliseconds.string(from: d) == "2026-01-01T22:00:00.000Z")
        #expect(ISO8601Milliseconds.date(from: "2026-01-01T23:00:00.250Z")?.timeIntervalSince(d) == 3600.25)
        #expect(ISO8601Milliseconds.date(from: "2026-01-01T23:00Z") != nil)
        for bad in ["", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01", "2026-01-01T00:00:00", "yesterday"] {
            #expect(ISO8601Milliseconds.date(from: bad) == nil, "\(bad)")
        }
    }

    @Test func numbersAreFormattedDeterministically() {
        #expect(AnalysisResult.fixed(28800, 3) == "28800.0")
        #expect(AnalysisResult.fixed(0.81, 3) == "0.81")
        #expect(AnalysisResult.fixed(-0.0001, 3) == "0.0")
        #expect(AnalysisResult.fixed(.nan, 3) == "null")
        #expect(JSONText.quoted("a\"b\\\n\u{1}") == "\"a\\\"b\\\\\\n\\u0001\"")
    }

    @Test func pacedReplayFollowsWallTimeAndKeepsTheTimeline() throws {
        // 0.5 s of audio at 10× real time must take ≥ 50 ms and give the same reads.
        let audio = testNoise(count: 8_000, level: 0.1, seed: 2)
        let steps: [ScriptedSource.Step] = stride(from: 0, to: 8_000, by: 1_000).map {
            .audio([Array(audio[$0..<($0 + 1_000)])])
        }
        let paced = PacedSource(ScriptedSource(steps: steps), pace: .speed(10))
        let began = Date()
        var frames = 0
        while case .audio(let start, let channels) = try paced.read() {
            #expect(start == Int64(frames))
            frames += channels[0].count
            // Never ahead of the (scaled) wall clock.
            #expect(Date().timeIntervalSince(began) >= Double(frames) / 16_000 / 10 - 0.002)
        }
        #expect(frames == 8_000)
        #expect(Date().timeIntervalSince(began) >= 0.05)
    }

    @Test func closingAPacedSourceWakesAWaitingRead() throws {
        let paced = PacedSource(ScriptedSource(steps: [.audio([[Float](repeating: 0, count: 160_000)])]),
                                pace: .realTime)   // a 10-s block
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { paced.close() }
        let began = Date()
        guard case .end = try paced.read() else { Issue.record("expected .end after close"); return }
        #expect(Date().timeIntervalSince(began) < 5)
    }

    @Test func prefetchingKeepsOrderAndBoundsItsQueue() throws {
        var rng = SeededRNG(seed: 5)
        let signal = testNoise(count: 100_000, level: 0.3, seed: 8)
        let inner = ScriptedSource(signal: [signal], maxBlock: 3000, rng: &rng)
        let prefetch = PrefetchingSource(inner, depth: 3)
        var got: [Float] = []
        var mine = 0
        while case .audio(let start, let channels) = try prefetch.read() {
            mine += 1
            #expect(start == Int64(got.count))
            got += channels[0]
            // The reader is never more than `depth` reads ahead of us (+1 read in flight).
            #expect(inner.reads <= mine + 3 + 1)
        }
        #expect(got == signal)
        guard case .end = try prefetch.read() else { Issue.record("expected .end to repeat"); return }
    }

    @Test func sideInputsArePublishedInTimeOrderBeforeTheAudioTheyPrecede() throws {
        var options = PipelineOptions.testing
        options.sideInputs = [.heartRate(HeartRateSample(time: 20_000, bpm: 60)),
                              .motion(MotionSample(time: 5, activity: 1)),
                              .heartRate(HeartRateSample(time: 90_000, bpm: 61))]
        let source = ScriptedSource(steps: [.audio([[Float](repeating: 0.1, count: 16_000)]),
                                            .audio([[Float](repeating: 0.1, count: 16_000)])])
        let pipeline = try AnalysisPipeline(info: testSessionInfo(), format: source.format, sourcePath: "x",
                                            options: options)
        var log: [String] = []
        pipeline.bus.observe { e in
            switch e {
            case .audio(let b): log.append("audio\(b.start)")
            case .heartRate(let h): log.append("hr\(h.time)")
            case .motion(let m): log.append("motion\(m.time)")
            case .sessionEnding: log.append("ending")
            default: break
            }
        }
        _ = try pipeline.run(source: source)
        #expect(log == ["motion5", "audio0", "hr20000", "audio16000", "hr90000", "ending"])
    }
}

@Suite struct PipelineTimelineTests {
    @Test func holesBecomeGapsAndRepeatsAreDropped() throws {
        let a = [Float](repeating: 0.1, count: 1000)
        let source = ScriptedSource(steps: [.audio([a])])
        let pipeline = try AnalysisPipeline(info: testSessionInfo(), format: source.format, sourcePath: "x",
                                            options: .testing)
        var log: [String] = []
        pipeline.bus.observe { e in
            switch e {
            case .audio(let b): log.append("audio\(b.start)+\(b.frameCount)")
            case .gap(let g): log.append("gap\(g.start)+\(g.length)")
            default: break
            }
        }
        pipeline.process(.audio(start: 0, channels: [a]))
        pipeline.process(.audio(start: 1500, channels: [a]))        // a 500-sample hole
        pipeline.process(.audio(start: 2000, channels: [a]))        // repeats 2000..<2500
        pipeline.process(.gap(start: 3000, length: 100, reason: .overrun))
        let result = pipeline.finish()
        #expect(log == ["audio0+1000", "gap1000+500", "audio1500+1000", "audio2500+500", "gap3000+100"])
        #expect(result.analysedSamples == 3100)
        #expect(result.audioStatistics.gapCount == 2)
        #expect(result.audioStatistics.overrunCount == 1)
    }
}
