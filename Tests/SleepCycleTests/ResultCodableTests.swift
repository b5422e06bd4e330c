import Foundation
import Testing
@testable import SleepCycle
import SleepCycleBus

/// `AnalysisResult` reads back its own JSON, and encodes to the same keys and values with a `JSONEncoder`.
@Suite struct ResultCodableTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let example = repo.appendingPathComponent("Fixtures/example-night.flac").path

    static func exampleResult() throws -> AnalysisResult {
        var options = PipelineOptions()
        options.alarm = .init(time: FileAnalysis.defaultStart.addingTimeInterval(120), windowSeconds: 60)
        // A beat before the recording (a warning) and 170 s of RR intervals (the heart session's summary).
        var beats: [AnalysisEvent] = [.heartRate(HeartRateSample(time: -16_000, bpm: 60))]
        var t = 0.0
        for k in 0..<170 { t += k % 3 == 0 ? 1.04 : 0.98; beats.append(.heartRate(HeartRateSample(time: AnalysisClock.samples(seconds: t), rrMs: k % 3 == 0 ? 1040 : 980))) }
        options.sideInputs = beats
        return try FileAnalysis.analyze(path: example, utcOffsetSeconds: 3600, options: options).labellingSnorers()
    }

    @Test func decodingTheJSONGivesTheSameJSON() throws {
        let result = try Self.exampleResult()
        #expect(!result.events.isEmpty && !result.warnings.isEmpty && result.smartAlarm != nil)
        #expect(result.heart?.summary.rmssdMs != nil && result.heart?.summary.sampleCount == 170)
        let json = result.jsonString()
        let decoded = try JSONDecoder().decode(AnalysisResult.self, from: Data(json.utf8))
        #expect(decoded.jsonString() == json)
        #expect(decoded.utcOffsetSeconds == 3600)
        #expect(decoded.events.count == result.events.count)
        #expect(decoded.textSummary() == result.textSummary())
    }

    @Test func encodingGivesTheContractsKeysAndValues() throws {
        let result = try Self.exampleResult()
        let ours = try JSONSerialization.jsonObject(with: Data(result.jsonString().utf8)) as? NSDictionary
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(result)) as? NSDictionary
        #expect(ours != nil && ours == encoded)
    }

    /// A night resumed at another rate has clips written at the earlier rate: `clipStartFrame` counts at the
    /// result's `source.sampleRate` for every clip (it stayed at 16 kHz: 498 560 read as 11.3 s at 44.1 kHz).
    @Test func aClipsStartFrameCountsAtTheSourcesRate() throws {
        let clip = AudioClipReady(eventId: 3, type: .snoring, status: .written, start: 498_560, end: 658_560,
                                  firstFrame: 498_560, frameCount: 160_000, sampleRate: 16_000,
                                  path: "a/00003-snoring.flac", encrypted: false, bytes: 1)
        let clock = AnalysisClock(start: Date(timeIntervalSince1970: 0))
        #expect(EventClip(clip, clock: clock, sourceRate: 44_100)?.startFrame == 1_374_156)   // 31.16 s
        #expect(EventClip(clip, clock: clock, sourceRate: 16_000)?.startFrame == 498_560)
        #expect(EventClip(clip, clock: clock)?.startFrame == 498_560)
    }

    @Test func malformedJSONIsAnError() {
        #expect(throws: (any Error).self) { try JSONDecoder().decode(AnalysisResult.self, from: Data("{}".utf8)) }
    }

    /// The engine's async `analyze(file:)` gives the CLI's result, byte for byte.
    @Test func engineAnalyzeFileEqualsFileAnalysis() async throws {
        let engine = SleepAnalysisEngine()
        try await engine.initialize()
        let viaEngine = try await engine.analyze(file: Self.example)
        let direct = try FileAnalysis.analyze(path: Self.example)
        #expect(viaEngine.jsonString() == direct.jsonString())
        #expect(await engine.currentState == .initialized)
    }

    @Test func motionSamplesNeedUseAccelerometer() async throws {
        var options = PipelineOptions()
        options.sideInputs = [.motion(MotionSample(time: 0, activity: 1))]
        let engine = SleepAnalysisEngine(options: options)
        try await engine.initialize()
        do {
            _ = try await engine.startAnalysis(config: SleepAnalysisConfig(useAccelerometer: false), at: Date(),
                                               using: try AudioFileSource(path: Self.example))
            Issue.record("motion samples were accepted with useAccelerometer false")
        } catch {
            #expect(error is SleepAnalysisEngineError)
        }
    }
}
