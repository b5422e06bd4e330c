import Foundation
import Testing
import SleepCycleBus
@testable import HeartSession

@Suite("heart session on the bus")
struct HeartSessionConsumerTests {
    static func s(_ seconds: Double) -> SampleTime { AnalysisClock.samples(seconds: seconds) }

    /// A night of `minutes` with beats from the mock, the audio's clock advancing a second at a time; returns what the consumer published.
    static func night(minutes: Double, beats: [BiosignalSample], lateBy: Double = 0) throws -> [AnalysisEvent] {
        var consumer = try HeartSessionConsumer()
        var out: [AnalysisEvent] = []
        var next = 0
        for second in 1...Int(minutes * 60) {
            // Readings dated before the block's end, as the feeder publishes them (a live push `lateBy` later).
            while next < beats.count, Double(beats[next].timestampMs) / 1000 + lateBy < Double(second) {
                let b = beats[next]
                out += consumer.handle(.heartRate(HeartRateSample(time: s(Double(b.timestampMs) / 1000), rrMs: b.rrMs.first)))
                next += 1
            }
            // The audio's clock (a gap moves it as a block does, without a second of samples).
            out += consumer.handle(.gap(AudioGap(start: s(Double(second - 1)), length: s(1), reason: .missingInput)))
        }
        out += consumer.handle(.sessionEnding(at: s(minutes * 60)))
        return out
    }

    @Test func framesOnEpochBoundariesAfterTheLatenessAndASummary() throws {
        let beats = MockBiosignalProvider.beats(durationSec: 20 * 60, meanBpm: 50, seed: 11)
        let out = try Self.night(minutes: 20, beats: beats)
        let frames = out.compactMap { if case .heartFrame(let f) = $0 { f } else { nil } }
        #expect(frames.map(\.end) == (1...40).map { Self.s(Double($0) * 30) })
        // Windows of 5 minutes (from the first beat until then); the interval is the epoch.
        #expect(frames[20].end - frames[20].start == Self.s(300) && frames[20].intervalStart == Self.s(600))
        let epoch = beats.filter { $0.timestampMs > 600_000 && $0.timestampMs <= 630_000 }
        #expect(abs(frames[20].intervalHrMeanBpm! - HeartMetrics.of(epoch).hrMeanBpm!) < 1e-9)
        let window = beats.filter { $0.timestampMs > 330_000 && $0.timestampMs <= 630_000 }
        #expect(frames[20].metrics == HeartMetrics.of(window, spectrum: false) && frames[20].metrics.lfHf == nil)
        // Frames ending on whole 5 minutes carry LF/HF too.
        let five = beats.filter { $0.timestampMs > 300_000 && $0.timestampMs <= 600_000 }
        #expect(frames[19].metrics == HeartMetrics.of(five) && frames[19].metrics.lfHf != nil)
        guard case .heartSummary(let summary)? = out.last else { Issue.record("no summary"); return }
        #expect(summary.metrics == HeartMetrics.of(beats))
    }

    @Test func lateReadingsStillReachTheirFrame() throws {
        let beats = MockBiosignalProvider.beats(durationSec: 9.5 * 60, seed: 2)
        let onTime = try Self.night(minutes: 10, beats: beats)
        let late = try Self.night(minutes: 10, beats: beats, lateBy: 8)      // within the 10-s lateness
        #expect(onTime.filter { if case .heartFrame = $0 { true } else { false } }.count == 20)
        #expect(late.map { "\($0)" } == onTime.map { "\($0)" })
    }

    @Test func noReadingsNoFramesAndReadingsBeforeTheStartRefused() throws {
        #expect(try Self.night(minutes: 5, beats: []).isEmpty)
        var consumer = try HeartSessionConsumer()
        #expect(consumer.handle(.heartRate(HeartRateSample(time: -16_000, bpm: 60))).isEmpty)
        _ = consumer.handle(.heartRate(HeartRateSample(time: 32_000, bpm: 60)))
        _ = consumer.handle(.heartRate(HeartRateSample(time: 16_000, bpm: 60)))      // earlier than one taken
        #expect(consumer.refusedReadings == 2)
        let end = consumer.handle(.sessionEnding(at: 64_000))
        guard case .heartSummary(let s)? = end.last else { Issue.record("no summary"); return }
        #expect(s.metrics.sampleCount == 1 && s.metrics.hrMeanBpm == 60 && s.metrics.rmssdMs == nil)
        #expect(consumer.state == .finished && consumer.handle(.sessionEnding(at: 64_000)).isEmpty)
    }
}
