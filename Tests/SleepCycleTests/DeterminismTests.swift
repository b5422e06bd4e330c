import Foundation
import Testing
import SleepCycleBus
import SleepCycleAudio
@testable import SleepCycle

@Suite struct DeterminismTests {
    private func analyse(seed: UInt64, blockSeed: UInt64, prefetch: Bool) throws -> String {
        var rng = SeededRNG(seed: blockSeed)
        let signal = testNoise(count: 50_000, level: 0.1, seed: seed) + [Float](repeating: 0, count: 40_000)
            + testNoise(count: 30_000, level: 0.1, seed: seed + 1)
        var source: any AudioSource = ScriptedSource(signal: [signal], maxBlock: 9000, rng: &rng)
        if prefetch { source = PrefetchingSource(source, depth: 2) }
        let info = testSessionInfo(id: SessionIdentifier.forFile(name: "night.wav", size: 240_044, edges: [],
                                                                 start: FileAnalysis.defaultStart))
        let pipeline = try AnalysisPipeline(info: info, format: source.format, sourcePath: "night.wav")
        return try pipeline.run(source: source).jsonString()
    }

    @Test func sameInputGivesByteIdenticalJSONWhateverTheBlockSizesAndThreads() throws {
        let a = try analyse(seed: 1, blockSeed: 1, prefetch: false)
        let b = try analyse(seed: 1, blockSeed: 99, prefetch: true)
        #expect(a == b)
        #expect(a.contains("\"status\": \"flatline\""))
        #expect(a.hasPrefix("{\n  \"sessionId\": \""))
    }

    @Test func jsonFollowsTheContract() throws {
        let json = try analyse(seed: 3, blockSeed: 3, prefetch: false)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        for key in ["sessionId", "startTime", "endTime", "source", "events", "breathingRates", "sleepStageIntervals",
                    "statistics", "audioStatistics"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["startTime"] as? String == "2000-01-01T22:00:00.000Z")
        #expect(object["endTime"] as? String == "2000-01-01T22:00:07.500Z")
        let stats = try #require(object["statistics"] as? [String: Any])
        #expect(stats["finalWakeTime"] is NSNull)
        #expect(stats["totalSleepDuration"] as? Double == 0)
        let durations = try #require(stats["sleepStageDurations"] as? [String: Double])
        #expect(Set(durations.keys) == ["awake", "light", "deep", "rem"])
        let health = try #require((object["audioStatistics"] as? [String: Any])?["healthIntervals"] as? [[String: Any]])
        #expect(health.map { $0["status"] as? String } == ["healthy", "flatline", "healthy"])
        #expect(health.first?["start"] as? String == "2000-01-01T22:00:00.000Z")
        #expect(health.last?["end"] as? String == "2000-01-01T22:00:07.500Z")
        // Keys appear in the contract's order.
        let order = ["\"sessionId\"", "\"startTime\"", "\"endTime\"", "\"source\"", "\"events\"", "\"breathingRates\"",
                     "\"sleepStageIntervals\"", "\"statistics\"", "\"audioStatistics\""]
        let positions = order.map { json.range(of: $0)!.lowerBound }
        #expect(positions == positions.sorted())
    }

    @Test func statisticsComeFromTheSleepStatisticsModuleInSecondsAndDates() {
        let clock = AnalysisClock(start: FileAnalysis.defaultStart)
        let e = { (s: Int64, stage: SleepStage) in StageEpoch(start: s * 480_000, end: (s + 1) * 480_000, stage: stage) }
        let epochs = [e(0, .awake), e(1, .light), e(2, .awake), e(3, .deep), e(4, .rem), e(5, .awake)]
        let snores = [SoundEvent(id: 1, type: .snoring, start: 1_000_000, end: 1_016_000, probability: 0.9),
                      SoundEvent(id: 2, type: .snoring, start: 1_100_000, end: 1_132_000, probability: 0.9),
                      SoundEvent(id: 3, type: .snoring, start: 2_200_000, end: 2_216_000, probability: 0.9)]
        let s = PipelineBuilder.statistics(epochs: epochs, events: snores, end: 6 * 480_000, clock: clock)
        #expect(s.totalSleepDuration == 90)
        #expect(s.sleepOnsetLatency == 30)
        #expect(s.sleepEfficiency == 0.5)
        #expect(s.finalWakeTime == clock.date(of: 5 * 480_000))
        #expect(s.numberOfAwakenings == 1)
        #expect(s.snoreTime == 4)
        #expect(s.snoreSessions.count == 2)          // 6.25 s apart merge, 67 s apart do not (60-s merge gap)
        #expect(s.sleepStageDurations == [.awake: 90, .light: 30, .deep: 30, .rem: 30])
        // Never asleep: finalWakeTime nil and, as the JSON contract fixes, every other statistic 0.
        let none = PipelineBuilder.statistics(epochs: [e(0, .awake)], events: snores, end: 480_000, clock: clock)
        #expect(none.finalWakeTime == nil && none.snoreTime == 0 && none.totalSleepDuration == 0)
        #expect(none.sleepStageDurations == [.awake: 0, .light: 0, .deep: 0, .rem: 0])
    }
}
