import Foundation
import Testing
import SleepCycleBus
import SleepCycleAudio
@testable import SleepCycle

@Suite struct EngineLifecycleTests {
    @Test func wrongStateCallsThrowTypedErrors() async throws {
        let engine = SleepAnalysisEngine(options: .testing)
        #expect(await engine.currentState == .uninitialized)
        await #expect(throws: SleepAnalysisEngineError.notInitialized) {
            try await engine.startAnalysis(at: Date(), using: ScriptedSource(steps: []))
        }
        await #expect(throws: SleepAnalysisEngineError.notRunning) { try await engine.stopAnalysis() }
        let features = try await engine.initialize()
        #expect(await engine.currentState == .initialized)
        #expect(await engine.isFeatureEnabled(.audioEvents) == features.audioEvents)
        await #expect(throws: SleepAnalysisEngineError.unsupportedConfiguration(
            "useAudio must be true (audio is the analysis input)")) {
            try await engine.startAnalysis(config: SleepAnalysisConfig(useAudio: false), at: Date(),
                                           using: ScriptedSource(steps: []))
        }
        _ = try await engine.startAnalysis(at: Date(), using: ScriptedSource(steps: [], live: true))
        #expect(await engine.currentState == .running)
        await #expect(throws: SleepAnalysisEngineError.alreadyRunning) {
            try await engine.startAnalysis(at: Date(), using: ScriptedSource(steps: []))
        }
        await #expect(throws: SleepAnalysisEngineError.alreadyRunning) { try await engine.initialize() }
        _ = try await engine.stopAnalysis()
        #expect(await engine.currentState == .initialized)
        await #expect(throws: SleepAnalysisEngineError.notRunning) { try await engine.stopAnalysis() }
    }

    @Test func stateStreamReportsTheLifecycle() async throws {
        let engine = SleepAnalysisEngine(options: .testing)
        let states = engine.stateStream
        try await engine.initialize()
        _ = try await engine.startAnalysis(at: Date(), using: ScriptedSource(steps: [], live: true))
        _ = try await engine.stopAnalysis()
        var seen: [SleepAnalysisEngine.State] = []
        for await s in states { seen.append(s); if seen.count == 3 { break } }
        #expect(seen == [.initialized, .running, .initialized])
    }

    @Test func stoppingALiveSessionUnblocksItsReadAndReturnsTheResult() async throws {
        let engine = SleepAnalysisEngine(options: .testing)
        try await engine.initialize()
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let audio = testNoise(count: 48_000, level: 0.1, seed: 5)
        let source = ScriptedSource(steps: [.audio([audio]), .gap(32_000), .audio([audio])], live: true)
        let health = engine.audioHealthStream
        let id = try await engine.startAnalysis(at: start, using: source)
        // The live source blocks after its script; give the analysis thread time to get there.
        for _ in 0..<200 where source.reads < 4 { try await Task.sleep(nanoseconds: 5_000_000) }
        let result = try await engine.stopAnalysis()
        #expect(result.sessionId == id)
        #expect(result.startTime == start)
        #expect(result.analysedSamples == 128_000)
        #expect(result.endTime == start.addingTimeInterval(8))
        #expect(result.audioStatistics.healthIntervals.map(\.status) == [.healthy, .missingInput, .healthy])
        #expect(result.audioStatistics.gapCount == 1)
        var updates: [AudioHealthStatus] = []
        for await u in health { updates.append(u.status) }           // finished with the session
        #expect(updates == [.healthy, .missingInput, .healthy])
    }

    @Test func aFileSessionRunsToTheEndAndListenersSeeAllOfIt() async throws {
        let engine = SleepAnalysisEngine(options: .testing)
        try await engine.initialize()
        var rng = SeededRNG(seed: 11)
        let source = ScriptedSource(signal: [testNoise(count: 40_000, level: 0.2, seed: 1)], maxBlock: 4000, rng: &rng)
        let listener = RecordingListener()
        let progress = engine.progressStream
        _ = try await engine.startAnalysis(at: FileAnalysis.defaultStart, using: source, eventListeners: [listener])
        try await engine.waitForSourceEnd()
        let result = try await engine.stopAnalysis()
        #expect(result.analysedSamples == 40_000)
        #expect(listener.batches.reduce(0) { $0 + $1.samples.count } == 40_000)
        var last: SampleTime = 0
        for await p in progress { last = p }
        #expect(last == 40_000)
    }

    @Test func analysisRunsOffTheActorAndTheActorStaysResponsive() async throws {
        let engine = SleepAnalysisEngine(options: .testing)
        try await engine.initialize()
        _ = try await engine.startAnalysis(at: Date(), using: ScriptedSource(steps: [], live: true))
        // The analysis thread is blocked in read(); the actor still answers immediately.
        let clock = ContinuousClock()
        let elapsed = await clock.measure { _ = await engine.currentState }
        #expect(elapsed < .seconds(1))
        _ = try await engine.stopAnalysis()
    }
}

@Suite struct EngineLiveSourceTests {
    /// The engine with the host-pushed source: pushed audio and a hole in it come out as analysed audio and a
    /// `missingInput` health interval; a second session on the same engine works and its streams are fresh.
    @Test func injectedBuffersThroughTwoSessions() async throws {
        let engine = SleepAnalysisEngine(options: .testing)
        try await engine.initialize()
        for session in 0..<2 {
            let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1)
            let health = engine.audioHealthStream
            let id = try await engine.startAnalysis(at: FileAnalysis.defaultStart, using: source)
            try source.push([testNoise(count: 32_000, level: 0.1, seed: UInt64(session + 1))], at: 0)
            try source.push([testNoise(count: 32_000, level: 0.1, seed: 9)], at: 64_000)     // 2-s hole
            source.finish()
            try await engine.waitForSourceEnd()
            let result = try await engine.stopAnalysis()
            #expect(result.sessionId == id)
            #expect(result.analysedSamples == 96_000)
            #expect(result.audioStatistics.healthIntervals.map(\.status) == [.healthy, .missingInput, .healthy])
            var statuses: [AudioHealthStatus] = []
            for await u in health { statuses.append(u.status) }
            #expect(statuses == [.healthy, .missingInput, .healthy], "session \(session)")
        }
    }
}
