import Foundation
import Testing
@testable import SleepCycle

/// Two sleepers on a stereo input (channel separation), through the whole pipeline and the engine's data-source API.
@Suite struct TwoSleeperTests {
    static let start = FileAnalysis.defaultStart

    /// The example night on the left microphone; on the right the same night 12 dB quieter (the far microphone)
    /// with its own noise (−60 dBFS): one sleeper, heard on both.
    static func oneSleeperHeardTwice(seconds: Int? = nil) throws -> [[Float]] {
        var night = try ResumeTests.exampleNight()
        if let seconds { night = Array(night.prefix(seconds * 16_000)) }
        let far = Float(pow(10.0, -12.0 / 20))
        let noise = testNoise(count: night.count, level: 0.001, seed: 77)
        return [night, zip(night, noise).map { $0 * far + $1 }]
    }

    static func steps(_ stereo: [[Float]], size: Int = 8_000) -> [ScriptedSource.Step] {
        stride(from: 0, to: stereo[0].count, by: size).map { i in
            .audio(stereo.map { Array($0[i..<min(i + size, $0.count)]) })
        }
    }

    static func analyse(_ stereo: [[Float]], preset: ChannelSeparationConfig.Preset) throws -> SeparatedAnalysisResult {
        let source = ScriptedSource(steps: steps(stereo), channels: 2)
        var options = PipelineOptions()
        options.channelSeparation = .preset(preset)
        let info = SessionInfo(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!,
                               clock: AnalysisClock(start: start), sourceSampleRate: 16_000, channelCount: 2)
        let pipeline = try AnalysisPipeline(info: info, format: source.format, sourcePath: "two.wav", options: options)
        let result = try pipeline.run(source: source)
        return try #require(pipeline.separatedResult(from: result))
    }

    static func mono(_ samples: [Float]) throws -> AnalysisResult {
        let source = ScriptedSource(steps: steps([samples]), channels: 1)
        let pipeline = try AnalysisPipeline(info: testSessionInfo(), format: source.format, sourcePath: "one.wav")
        return try pipeline.run(source: source)
    }

    @Test("one sleeper heard on both microphones: their session has the mono analysis's events, the other none",
          arguments: ChannelSeparationConfig.Preset.allCases)
    func oneSleeper(_ preset: ChannelSeparationConfig.Preset) throws {
        let stereo = try Self.oneSleeperHeardTwice()
        let two = try Self.analyse(stereo, preset: preset)
        let alone = try Self.mono(stereo[0])
        let primary = two.session(.primary), secondary = two.session(.secondary)
        #expect(secondary.events.isEmpty, "cross-talk: \(secondary.events.map { ($0.type, $0.start) })")
        // The primary's session is the mono analysis of their microphone: every event of it, at most one replaced by
        // the far microphone's detection of the same sound (a talking event is decided 90 s after the other
        // channel's detection of it; docs/0009).
        #expect(abs(primary.events.count - alone.events.count) <= 1)
        let found = alone.events.filter { b in
            primary.events.contains { $0.type == b.type && abs($0.start.timeIntervalSince(b.start)) < 0.5 }
        }
        #expect(found.count >= alone.events.count - 1, "\(alone.events.count - found.count) mono events missing")
        for a in primary.events {
            #expect((a.attributionConfidence ?? 0) >= 0.6)
            #expect(a.channel == .primary)
        }
        // Each sleeper has a hypnogram of their own, and the session ids are the session's and one derived from it.
        #expect(!primary.sleepStageIntervals.isEmpty && !secondary.sleepStageIntervals.isEmpty)
        #expect(primary.sessionId.uuidString == "00000000-0000-0000-0000-00000000000A")
        #expect(secondary.sessionId == AnalysisPipeline.sessionIds(for: primary.sessionId)[.secondary])
        #expect(secondary.breathingRates.allSatisfy { $0.channel == .secondary })
        #expect(secondary.audioStatistics.healthIntervals.allSatisfy { $0.channel == .secondary })
    }

    @Test("swapping the microphones swaps the sleepers")
    func swapped() throws {
        let stereo = try Self.oneSleeperHeardTwice()
        let two = try Self.analyse([stereo[1], stereo[0]], preset: .bedSideMics)
        #expect(two.session(.primary).events.isEmpty)
        #expect(abs(two.session(.secondary).events.count - (try Self.mono(stereo[0])).events.count) <= 1)
    }

    @Test("the two-sleeper JSON is deterministic and has the contract's shape")
    func deterministicJSON() throws {
        let stereo = try Self.oneSleeperHeardTwice(seconds: 90)
        let a = try Self.analyse(stereo, preset: .centeredMicArray).jsonString()
        let b = try Self.analyse(stereo, preset: .centeredMicArray).jsonString()
        #expect(a == b)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(a.utf8)) as? [String: Any])
        #expect(Array(object.keys).sorted() == ["channelSeparation", "sessions", "source"])
        let sessions = try #require(object["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["channel"] as? String } == ["primary", "secondary"])
        for key in ["sessionId", "events", "breathingRates", "sleepStageIntervals", "statistics", "audioStatistics"] {
            #expect(sessions.allSatisfy { $0[key] != nil }, "\(key)")
        }
        let events = try #require(sessions[0]["events"] as? [[String: Any]])
        #expect(!events.isEmpty && events.allSatisfy { $0["attributionConfidence"] is Double })
        // It reads back (as a stored night's result is read back).
        let back = try SeparatedAnalysisResult(json: Data(a.utf8), config: .centeredMicArray)
        #expect(back.jsonString() == a)
    }

    @Test("a mono source with channel separation is refused")
    func monoRefused() throws {
        var options = PipelineOptions()
        options.channelSeparation = .bedSideMics
        let source = ScriptedSource(steps: [], channels: 1)
        #expect(throws: ChannelSeparationError.self) {
            _ = try AnalysisPipeline(info: testSessionInfo(), format: source.format, sourcePath: "mono.wav", options: options)
        }
    }

    @Test("the engine reports multi-channel analysis for two channels only")
    func features() async throws {
        let engine = SleepAnalysisEngine()
        #expect(try await engine.initialize(channelCount: 2).multiChannelAnalysis)
        #expect(try await !engine.initialize(channelCount: 1).multiChannelAnalysis)
    }

    @Test("data source API: both sleepers' sessions over a file equal the pipeline's split")
    func dataSourceOverAFile() async throws {
        let stereo = try Self.oneSleeperHeardTwice(seconds: 120)
        let engine = SleepAnalysisEngine()
        try await engine.initialize(channelCount: 2)
        let progress = engine.progressStream
        try await engine.startDataSource(using: ScriptedSource(steps: Self.steps(stereo), channels: 2),
                                         at: Self.start, channelSeparationConfig: .bedSideMics)
        let idP = UUID(), idS = UUID()
        #expect(try await engine.startAnalysis(channel: .primary, config: SleepAnalysisConfig(sessionId: idP)) == idP)
        #expect(try await engine.startAnalysis(channel: .secondary, config: SleepAnalysisConfig(sessionId: idS)) == idS)
        await #expect(throws: SleepAnalysisEngineError.self) { try await engine.startAnalysis(channel: .primary) }
        await #expect(throws: SleepAnalysisEngineError.self) { try await engine.stopAnalysis() }
        // Wait until all of it has been analysed (the source ends: the sessions then cover it to its end).
        for await p in progress where p >= SampleTime(stereo[0].count) { break }
        let primary = try await engine.stopAnalysis(channel: .primary)
        let secondary = try await engine.stopAnalysis(channel: .secondary)
        await engine.stopDataSource()
        #expect(await engine.currentState == .initialized)
        let reference = try Self.analyse(stereo, preset: .bedSideMics)
        #expect(primary.sessionId == idP && secondary.sessionId == idS)
        #expect(primary.events.map(\.type) == reference.session(.primary).events.map(\.type))
        #expect(primary.events.map(\.start) == reference.session(.primary).events.map(\.start))
        #expect(secondary.events.isEmpty)
        #expect(primary.events.allSatisfy { $0.sessionId == idP })
    }

    @Test("one sleeper's session stops while the other's goes on; stopDataSource discards what still runs")
    func independentStop() async throws {
        let engine = SleepAnalysisEngine()
        try await engine.initialize(channelCount: 2)
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 2)
        try await engine.startDataSource(using: source, at: Self.start)
        _ = try await engine.startAnalysis(channel: .primary)
        _ = try await engine.startAnalysis(channel: .secondary)
        let progress = engine.progressStream
        let minute = [testNoise(count: 960_000, level: 0.01, seed: 1), testNoise(count: 960_000, level: 0.01, seed: 2)]
        try source.push(minute, at: 0)
        for await p in progress where p >= 960_000 { break }
        // A live session ends at the next block the source delivers: the host keeps pushing audio meanwhile.
        let stopping = Task { try await engine.stopAnalysis(channel: .primary) }
        try await Task.sleep(for: .milliseconds(200))
        let progress2 = engine.progressStream
        try source.push([Array(minute[0][..<1600]), Array(minute[1][..<1600])], at: 960_000)
        let primary = try await stopping.value
        #expect(primary.analysedSamples == 960_000 || primary.analysedSamples == 961_600)
        await #expect(throws: SleepAnalysisEngineError.self) { try await engine.stopAnalysis(channel: .primary) }
        // The secondary sleeper's session goes on with the next minute.
        try source.push([Array(minute[0][1600...]), Array(minute[1][1600...])], at: 961_600)
        for await p in progress2 where p >= 1_920_000 { break }
        let stopping2 = Task { try await engine.stopAnalysis(channel: .secondary) }
        try await Task.sleep(for: .milliseconds(200))
        try source.push([[Float](repeating: 0, count: 1600), [Float](repeating: 0, count: 1600)], at: 1_920_000)
        let secondary = try await stopping2.value
        #expect(secondary.analysedSamples >= 1_920_000)
        #expect(secondary.endTime.timeIntervalSince(primary.endTime) >= 59)
        // Restart the primary's session and force-stop everything: its result is discarded, the engine is idle.
        _ = try await engine.startAnalysis(channel: .primary)
        await engine.stopDataSource()
        #expect(await engine.currentState == .initialized)
        await #expect(throws: SleepAnalysisEngineError.self) { try await engine.stopAnalysis(channel: .primary) }
        // A mono source is refused for a two-sleeper data source.
        await #expect(throws: SleepAnalysisEngineError.self) {
            try await engine.startDataSource(using: try InjectedAudioSource(sampleRate: 16_000, channels: 1), at: Self.start)
        }
    }
}
