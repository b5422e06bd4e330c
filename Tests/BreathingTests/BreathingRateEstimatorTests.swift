import Testing
import SleepCycleBus
@testable import Breathing

@Suite struct BreathingRateEstimatorTests {
    @Test(arguments: [(8.0, 1), (15.0, 2), (24.0, 3), (30.0, 4)])
    func syntheticBreathingInNoiseGivesTheRate(bpm: Double, seed: Int) {
        let signal = SyntheticBreathing.breathing(bpm: bpm, seconds: 90, snrDb: 5, seed: UInt64(seed))
        let result = BreathingRateEstimator.run([signal])
        // 90 s with a 60 s window and 30 s hop: two windows, both answered.
        #expect(result.estimates.count == 2)
        for e in result.estimates {
            #expect(abs(e.bpm - bpm) < 1.0, "estimate \(e.bpm) for \(bpm) breaths/min")
            #expect(e.confidence > 0.3 && e.confidence <= 1)
            #expect(e.channel == nil)
        }
        #expect(result.estimates.map(\.time) == [30 * 16_000, 60 * 16_000])
    }

    @Test func aSteadyNightsRateDecidesEqualBurstsAndARealChangeTakesOver() {
        // 5 min at 12/min, then a minute of inhale and exhale as equal bursts of one tone at 12/min, then 12/min
        // again: without the night before, a window of the bursts can only say 24 (or nothing); after it, 12.
        let steady = SyntheticBreathing.breathing(bpm: 12, seconds: 300, snrDb: 20, seed: 1)
        let equal = SyntheticBreathing.equalBursts(bpm: 12, seconds: 60, sameTone: true, seed: 5)
        let after = SyntheticBreathing.breathing(bpm: 12, seconds: 120, snrDb: 20, seed: 3)
        let alone = BreathingRateEstimator.run([equal + after]).estimates.filter { $0.time <= 30 * 16_000 }
        #expect(alone.allSatisfy { abs($0.bpm - 24) < 1.5 }, "\(alone.map(\.bpm))")
        let night = BreathingRateEstimator.run([steady + equal + after]).estimates
        let bursts = night.filter { $0.time >= 300 * 16_000 && $0.time <= 360 * 16_000 }
        #expect(!bursts.isEmpty && bursts.allSatisfy { abs($0.bpm - 12) < 1.5 }, "\(bursts.map(\.bpm))")
        // Breathing that really doubles (12 → 24/min) is answered at its new rate from the third window on: the
        // prior is made of what each window alone said, and one of the latest two must agree with it.
        let faster = SyntheticBreathing.breathing(bpm: 24, seconds: 240, snrDb: 20, seed: 2)
        let change = BreathingRateEstimator.run([steady + faster]).estimates.filter { $0.time >= 330 * 16_000 }
        let settled = change.filter { $0.time >= 420 * 16_000 }
        #expect(settled.count >= 3 && settled.allSatisfy { abs($0.bpm - 24) < 1.5 }
                && change.filter { abs($0.bpm - 24) >= 1.5 }.count <= 2, "\(change.map(\.bpm))")
    }

    @Test func anAnswerFarFromASteadyNightsRateIsNotPublished() {
        func analysis(_ bpm: Double, doubledByPrior: Bool = false) -> BreathingRateAnalysis {
            BreathingRateAnalysis(bpm: bpm, confidence: 0.5, autocorrelationBpm: bpm, spectralBpm: bpm, periodicity: 0.5,
                                  doubledByPrior: doubledByPrior)
        }
        let range = BreathingRateEstimator.Configuration().priorJumpRange
        // A third, half or twice a steady 15/min: not published (the cost night's 4.0, 5.7 and 8.5 among 12–17/min).
        for bpm in [5.0, 7.5, 30.0] { #expect(!BreathingRateEstimator.fits(analysis(bpm), prior: 15, range: range)) }
        for bpm in [10.0, 15.0, 22.0] { #expect(BreathingRateEstimator.fits(analysis(bpm), prior: 15, range: range)) }
        // Without a prior anything goes; a window the prior itself doubled fits it by construction.
        #expect(BreathingRateEstimator.fits(analysis(5), prior: nil, range: range))
        #expect(BreathingRateEstimator.fits(analysis(15, doubledByPrior: true), prior: 15, range: range))
    }

    @Test func whiteNoiseAndSilenceGiveNoValue() {
        for seed in 1...3 {
            let noise = SyntheticBreathing.whiteNoise(seconds: 90, seed: UInt64(seed))
            #expect(BreathingRateEstimator.run([noise]).estimates.isEmpty)
        }
        let silence = [Float](repeating: 0, count: 90 * 16_000)
        let result = BreathingRateEstimator.run([silence])
        #expect(result.estimates.isEmpty)
        #expect(result.trace.flatMap(\.values).allSatisfy { $0 == -100 })
    }

    @Test func recordingShorterThanTheWindowGetsOneEstimateAtTheEnd() throws {
        // 20 s at 15 breaths/min: five breaths, a third of the 60-s window.
        let signal = SyntheticBreathing.breathing(bpm: 15, seconds: 20, snrDb: 10, seed: 7)
        let pipe = try EnginePipe(channels: 1)
        var start = 0
        while start < signal.count {
            let published = pipe.audio(start: Int64(start), [Array(signal[start..<min(signal.count, start + 4000)])])
            #expect(published.isEmpty, "nothing before the session ends")
            start += 4000
        }
        let published = pipe.end(at: Int64(signal.count))
        #expect(published.count == 1)
        if let e = published.first {
            #expect(abs(e.bpm - 15) < 1.0)
            #expect(abs(e.time - 10 * 16_000) <= 1600)
        }
    }

    @Test func tooShortForThreeBreathsGivesNoValue() {
        // 8 s at 10 breaths/min: fewer than two breaths.
        let signal = SyntheticBreathing.breathing(bpm: 10, seconds: 8, snrDb: nil, seed: 3)
        #expect(BreathingRateEstimator.run([signal]).estimates.isEmpty)
    }

    @Test func traceChunksHoldOnlyNewSamplesAndTileTheTimeline() {
        let signal = SyntheticBreathing.breathing(bpm: 12, seconds: 12.34, snrDb: 10, seed: 5)
        let trace = BreathingRateEstimator.run([signal], blockSize: 1000).trace
        #expect(!trace.isEmpty)
        var expectedStart: Int64 = 0
        for chunk in trace {
            #expect(chunk.start == expectedStart)
            #expect(!chunk.values.isEmpty)
            #expect(chunk.rateHz == 10)
            expectedStart = chunk.start + Int64(chunk.values.count) * 1600
        }
        // Every complete 100-ms block of the 12.34 s (the unfinished last block is not published).
        #expect(trace.reduce(0) { $0 + $1.values.count } == 123)
    }

    @Test func estimatesAndTraceDoNotDependOnBlockSize() {
        let signal = SyntheticBreathing.breathing(bpm: 18, seconds: 75, snrDb: 5, seed: 11)
        let reference = BreathingRateEstimator.run([signal], blockSize: 4096)
        #expect(!reference.estimates.isEmpty)
        for blockSize in [777, 1600, 16_000, signal.count] {
            let other = BreathingRateEstimator.run([signal], blockSize: blockSize)
            #expect(other.estimates.map(\.bpm) == reference.estimates.map(\.bpm))
            #expect(other.estimates.map(\.time) == reference.estimates.map(\.time))
            #expect(other.estimates.map(\.confidence) == reference.estimates.map(\.confidence))
            #expect(other.trace.flatMap(\.values) == reference.trace.flatMap(\.values))
        }
    }

    @Test func stereoGivesPerChannelEstimates() {
        let left = SyntheticBreathing.breathing(bpm: 12, seconds: 60, snrDb: 10, seed: 21)
        let right = SyntheticBreathing.breathing(bpm: 24, seconds: 60, snrDb: 10, seed: 22)
        let result = BreathingRateEstimator.run([left, right], blockSize: 3000)
        let primary = result.estimates.filter { $0.channel == .primary }
        let secondary = result.estimates.filter { $0.channel == .secondary }
        #expect(primary.count == 1 && secondary.count == 1)
        #expect(abs((primary.first?.bpm ?? 0) - 12) < 1)
        #expect(abs((secondary.first?.bpm ?? 0) - 24) < 1)
        #expect(result.trace.contains { $0.channel == .primary } && result.trace.contains { $0.channel == .secondary })
        #expect(!result.trace.contains { $0.channel == nil })
    }

    @Test func aGapEndsTheSegmentAndEachSideIsAnalysedAlone() throws {
        // 25 s at 12 breaths/min, a 10-s gap, then 25 s at 30 breaths/min.
        let first = SyntheticBreathing.breathing(bpm: 12, seconds: 25, snrDb: 10, seed: 31)
        let second = SyntheticBreathing.breathing(bpm: 30, seconds: 25, snrDb: 10, seed: 32)
        let pipe = try EnginePipe(channels: 1)
        pipe.audio(start: 0, [first])
        pipe.gap(start: 400_000, length: 160_000)
        pipe.audio(start: 560_000, [second])
        pipe.end(at: 960_000)
        let estimates = pipe.estimates
        #expect(estimates.count == 2)
        if estimates.count == 2 {
            #expect(abs(estimates[0].bpm - 12) < 1 && estimates[0].time < 400_000)
            #expect(abs(estimates[1].bpm - 30) < 1.5 && estimates[1].time > 560_000)
        }
    }

    @Test func audioEnvelopeGivesTheSameRatesAndIsBlockSizeIndependent() {
        var config = BreathingRateEstimator.Configuration()
        config.envelopeSource = .audio
        let signal = SyntheticBreathing.breathing(bpm: 20, seconds: 70, snrDb: 5, seed: 41)
        let reference = BreathingRateEstimator.run([signal], blockSize: 4096, configuration: config)
        #expect(reference.estimates.count == 1)
        #expect(abs((reference.estimates.first?.bpm ?? 0) - 20) < 1)
        for blockSize in [333, 1600, signal.count] {
            let other = BreathingRateEstimator.run([signal], blockSize: blockSize, configuration: config)
            #expect(other.estimates.map(\.bpm) == reference.estimates.map(\.bpm))
            #expect(other.trace.flatMap(\.values) == reference.trace.flatMap(\.values))
        }
        // Features and audio envelopes measure the same band: the rates agree.
        let viaFeatures = BreathingRateEstimator.run([signal])
        #expect(abs((viaFeatures.estimates.first?.bpm ?? 0) - (reference.estimates.first?.bpm ?? 100)) < 0.5)
    }
}
