import Foundation
import Testing
import SleepCycleBus
import SleepCycleFormats
@testable import SleepCycle

@Suite struct SupportTests {
    @Test func uuidV5MatchesTheRFCConstruction() {
        // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
        let dns = UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
        #expect(SessionIdentifier.uuidV5(namespace: dns, name: "python.org").uuidString.lowercased()
                == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
        let head = [UInt8](repeating: 1, count: 100)
        let a = SessionIdentifier.forFile(name: "n.wav", size: 10, edges: head, start: FileAnalysis.defaultStart)
        #expect(a == SessionIdentifier.forFile(name: "n.wav", size: 10, edges: head, start: FileAnalysis.defaultStart))
        #expect(a != SessionIdentifier.forFile(name: "n.wav", size: 11, edges: head, start: FileAnalysis.defaultStart))
        #expect(a != SessionIdentifier.forFile(name: "n.wav", size: 10, edges: head, start: FileAnalysis.defaultStart + 0.001))
        // Same name and size, other content: another id (the contract's content digest).
        var other = head
        other[99] = 2
        #expect(a != SessionIdentifier.forFile(name: "n.wav", size: 10, edges: other, start: FileAnalysis.defaultStart))
    }

    @Test func fileSessionIdsHashBothEndsOfTheContent() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ids-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = [UInt8](repeating: 7, count: 300_000)
        func id(_ name: String, _ content: [UInt8]) throws -> UUID? {
            let folder = dir.appendingPathComponent(UUID().uuidString)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent(name).path
            try Data(content).write(to: URL(fileURLWithPath: path))
            return SessionIdentifier.forFile(path: path, start: FileAnalysis.defaultStart)
        }
        let a = try #require(try id("night.wav", bytes))
        let copy = try id("night.wav", bytes)                      // a copy elsewhere: the same id
        bytes[299_999] = 8                                         // the last byte differs
        let lastDiffers = try id("night.wav", bytes)
        bytes[299_999] = 7
        bytes[0] = 8                                               // the first byte differs
        let firstDiffers = try id("night.wav", bytes)
        bytes[0] = 7
        bytes[150_000] = 8                                         // the middle is not hashed
        let middleDiffers = try id("night.wav", bytes)
        #expect(copy == a && lastDiffers != a && firstDiffers != a && middleDiffers == a)
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

    @Test func aLimitedSourceEndsAtExactlyItsLimitInAudioOrInAGap() throws {
        let audio = testNoise(count: 10_000, level: 0.1, seed: 3)
        // 3 000 samples, a 2 000-sample gap, 5 000 samples, another 2 000-sample gap, 2 000 samples.
        func inner() -> ScriptedSource {
            ScriptedSource(steps: [.audio([Array(audio[0..<3_000])]), .gap(2_000), .audio([Array(audio[3_000..<8_000])]),
                                   .gap(2_000), .audio([Array(audio[8_000..<10_000])])], live: true)
        }
        /// Every read up to `.end`, as (start, length, is audio); the audio delivered; whether the limit ended it.
        func drain(_ limit: Int64) throws -> (reads: [String], samples: [Float], reachedLimit: Bool, innerReads: Int) {
            let scripted = inner()
            let limited = LimitedSource(scripted, limit: limit)
            var reads: [String] = [], samples: [Float] = []
            while true {
                switch try limited.read() {
                case .audio(let start, let channels): reads.append("a\(start)+\(channels[0].count)"); samples += channels[0]
                case .gap(let start, let length, _): reads.append("g\(start)+\(length)")
                case .end:
                    // `.end` repeats and the inner source is not read again.
                    let innerReads = scripted.reads
                    guard case .end = try limited.read() else { Issue.record("expected .end to repeat"); return (reads, samples, false, 0) }
                    #expect(scripted.reads == innerReads)
                    return (reads, samples, limited.reachedLimit, innerReads)
                }
            }
        }
        // Inside an audio block: cut at the limit.
        let inFirstBlock = try drain(1_000)
        #expect(inFirstBlock.reads == ["a0+1000"] && inFirstBlock.samples == Array(audio[0..<1_000]))
        let inSecondBlock = try drain(6_500)
        #expect(inSecondBlock.reads == ["a0+3000", "g3000+2000", "a5000+1500"])
        #expect(inSecondBlock.samples == Array(audio[0..<3_000]) + Array(audio[3_000..<4_500]) && inSecondBlock.reachedLimit)
        // Inside a gap: the gap is cut; the inner source is closed and read once more (its `.end`, which completes
        // its warnings), nothing after that.
        let inGap = try drain(4_000)
        #expect(inGap.reads == ["a0+3000", "g3000+1000"] && inGap.reachedLimit && inGap.innerReads == 3)
        // On a boundary: the block that reaches it is whole, and no audio after it is read.
        let onBoundary = try drain(3_000)
        #expect(onBoundary.reads == ["a0+3000"] && onBoundary.reachedLimit && onBoundary.innerReads == 2)
        // Beyond the input (the scripted source is live: it blocks after its script until closed, so the limit at
        // 14 000 — the end of its script — must close it rather than wait).
        let whole = try drain(14_000)
        #expect(whole.reads.count == 5 && whole.samples == audio && whole.reachedLimit)
        // An input that ends before the limit ends the source, and the limit is not what ended it.
        let short = LimitedSource(ScriptedSource(steps: [.audio([Array(audio[0..<3_000])])]), limit: 16_000)
        guard case .audio = try short.read(), case .end = try short.read() else { Issue.record("expected audio, .end"); return }
        #expect(!short.reachedLimit)
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
                              .heartRate(HeartRateSample(time: 90_000, bpm: 61)),
                              .heartRate(HeartRateSample(time: -16_000, bpm: 59))]
        options.sideInputOrigins[.heartRate] = "hr.csv"
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
        let result = try pipeline.run(source: source)
        // Samples outside the recording (one before it, one after its end) are not published, and are reported
        // once, naming their file.
        #expect(log == ["motion5", "audio0", "hr20000", "audio16000", "ending"])
        #expect(result.warnings.count == 1)
        let warning = try #require(result.warnings.first)
        #expect(warning.code == .sideInputOutsideRecording)
        #expect(warning.message.hasPrefix("heart-rate samples (hr.csv): 2 of 3 lie outside the recording (1 before it, 1 after it"),
                "\(warning.message)")
    }

    /// Grouped motion samples are reported by the readings they stand for, as the readings one by one are: 4 s of
    /// 50-Hz readings around a 2-s recording, a second of them before it and a second after, are 50 before it and
    /// 49 after it (the one at 2 s is its last instant, inside), not one group each.
    @Test func groupedMotionReadingsAreCountedAsReadingsOutsideTheRecording() throws {
        let readings = (0..<200).map { MotionSample(time: AnalysisClock.samples(seconds: Double($0) / 50 - 1), activity: 0.1) }
        let grouped = MotionSample.binned(readings, every: AnalysisClock.samples(seconds: 1))
        // The readings on whole seconds stay alone: -1 s, 0 s, 1 s and 2 s.
        #expect(grouped.map(\.count) == [1, 49, 1, 49, 1, 49, 1, 49])
        var messages: [String] = []
        for samples in [readings, grouped] {
            var options = PipelineOptions.testing
            options.sideInputs = samples.map { .motion($0) }
            options.sideInputOrigins[.motion] = "motion.csv"
            let source = ScriptedSource(steps: [.audio([[Float](repeating: 0.1, count: 32_000)])])
            let pipeline = try AnalysisPipeline(info: testSessionInfo(), format: source.format, sourcePath: "x",
                                                options: options)
            messages.append(try #require(pipeline.run(source: source).warnings.first).message)
        }
        #expect(messages[0].hasPrefix("motion samples (motion.csv): 99 of 200 lie outside the recording (50 before it, 49 after it"),
                "\(messages[0])")
        #expect(messages[1] == messages[0])
    }

    /// A wearable started after the microphone (first heart-rate sample 30 s or more into the night) crashed the
    /// stager (a nil unwrap in EpochDesign); and samples all outside the recording are reported, not fatal.
    @Test func heartRateStartingLateOrOutsideTheRecordingNeverCrashes() throws {
        for first in [30.0, 45, 200, 100_000] {
            var options = PipelineOptions.testing      // staging is what crashed; cheap features suffice
            options.sideInputs = stride(from: first, to: first + 600, by: 5).map {
                .heartRate(HeartRateSample(time: AnalysisClock.samples(seconds: $0), bpm: 60 + $0.truncatingRemainder(dividingBy: 7)))
            }
            let signal = testNoise(count: 16_000 * 300, level: 0.05, seed: 4)
            var rng = SeededRNG(seed: 1)
            let source = ScriptedSource(signal: [signal], maxBlock: 16_384, rng: &rng)
            let pipeline = try AnalysisPipeline(info: testSessionInfo(), format: source.format, sourcePath: "x",
                                                options: options)
            let result = try pipeline.run(source: source)
            #expect(!result.sleepStageIntervals.isEmpty)
            #expect(result.warnings.isEmpty == (first + 600 <= 300), "\(first): \(result.warnings)")
            if first >= 300 { #expect(result.warnings.first?.message.hasPrefix("heart-rate samples: none of 120 lie within") == true) }
        }
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
