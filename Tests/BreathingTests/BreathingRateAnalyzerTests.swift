import Testing
@testable import Breathing

@Suite struct BreathingRateAnalyzerTests {
    /// An envelope (dB at 10 Hz) of breath cycles: inhale burst, weaker exhale burst, pause. Cycle lengths
    /// vary randomly by up to ±4 %, as real breathing does (a perfectly periodic envelope whose period
    /// falls between samples can be refused: see docs/0006-breathing.md). Returns the envelope and the
    /// true mean rate.
    static func envelope(periodSec: Double, seconds: Double, seed: UInt64 = 1,
                         inhaleDb: Float = 20, exhaleDb: Float = 14) -> (values: [Float], bpm: Double) {
        var rng = SyntheticBreathing.Noise(seed: seed)
        var starts = [0.0]
        while starts.last! < seconds { starts.append(starts.last! + periodSec * (1 + 0.08 * (rng.uniform() - 0.5))) }
        var cycle = 0
        let values: [Float] = (0..<Int(seconds * 10)).map { i in
            let t = Double(i) / 10
            while starts[cycle + 1] <= t { cycle += 1 }
            let phase = (t - starts[cycle]) / (starts[cycle + 1] - starts[cycle])
            return phase < 0.4 ? inhaleDb : phase < 0.85 ? exhaleDb : 0
        }
        let complete = starts.filter { $0 <= seconds }
        return (values, 60 * Double(complete.count - 1) / complete.last!)
    }

    @Test(arguments: [6.5, 10.0, 17.0, 28.0, 33.0, 40.0])
    func cycleRateNotBurstRate(bpm: Double) {
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let envelope = Self.envelope(periodSec: 60 / bpm, seconds: 60)
        let result = analyzer.analyze(envelope.values[...])
        #expect(result != nil)
        if let result {
            #expect(abs(result.bpm - envelope.bpm) < 0.5, "\(result.bpm) for \(envelope.bpm)")
            #expect(abs(result.autocorrelationBpm - result.spectralBpm) <= max(1, 0.1 * bpm))
            #expect(result.confidence > 0.5)
        }
    }

    @Test func ratesOutsideTheRangeAreRefused() {
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        // 3 breaths/min (below 4) and 60 breaths/min (above 45).
        #expect(analyzer.analyze(Self.envelope(periodSec: 20, seconds: 60).values[...]) == nil)
        #expect(analyzer.analyze(Self.envelope(periodSec: 1, seconds: 60).values[...]) == nil)
    }

    @Test func constantEnvelopeHasNoRhythm() {
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        #expect(analyzer.analyze([Float](repeating: -100, count: 600)[...]) == nil)
    }
}
