import Testing
@testable import Breathing

/// Inhale and exhale heard as two bursts of the same level, evenly spaced: the level envelope repeats every
/// burst, and only the bursts' tone (`FeatureEnvelope`) tells one breath of two bursts from breathing at twice
/// the rate (docs/0006-breathing.md, "Tone alternation").
@Suite struct ToneAlternationTests {
    typealias Noise = SyntheticBreathing.Noise

    /// Level (dB, 10 Hz) and tone of evenly spaced equal bursts, each 40 % of the cycle: the first burst's tone
    /// `inhaleTone`, the second's `exhaleTone`, the pauses 0 dB; ±1 dB noise on both.
    static func bursts(bpm: Double, inhaleTone: Float, exhaleTone: Float, seed: UInt64)
        -> (level: [Float], tone: [Float], bpm: Double) {
        var rng = Noise(seed: seed)
        let (starts, rate) = OctaveDecisionTests.cycles(periodSec: 60 / bpm, seconds: 60, rng: &rng)
        var cycle = 0
        var level: [Float] = [], tone: [Float] = []
        for i in 0..<600 {
            let t = Double(i) / 10
            while starts[cycle + 1] <= t { cycle += 1 }
            let phase = (t - starts[cycle]) / (starts[cycle + 1] - starts[cycle])
            let inhale = phase < 0.4, exhale = phase >= 0.5 && phase < 0.9
            level.append(inhale || exhale ? 20 : 0)
            tone.append(inhale ? inhaleTone : exhale ? exhaleTone : 0)
        }
        var noise = Noise(seed: seed + 200)
        tone = tone.map { $0 + Float(2 * (noise.uniform() - 0.5)) }
        return (OctaveDecisionTests.withFloorNoise(level, seed: seed), tone, rate)
    }

    @Test(arguments: [(10.0, UInt64(1)), (14, 2), (18, 3), (22, 4)])
    func equalBurstsAlternatingInToneAreOneBreath(bpm: Double, seed: UInt64) throws {
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let b = Self.bursts(bpm: bpm, inhaleTone: 6, exhaleTone: -6, seed: seed)
        let answer = analyzer.analyze(b.level[...], tone: b.tone[...])
        let result = try #require(answer)
        #expect(abs(result.bpm - b.bpm) < 1, "\(result.bpm) for \(b.bpm)")
        // The level alone cannot tell: refused, or the burst rate.
        if let levelOnly = analyzer.analyze(b.level[...]) {
            #expect(abs(levelOnly.bpm - 2 * b.bpm) < 2, "\(levelOnly.bpm) for bursts at \(2 * b.bpm)")
        }
    }

    @Test(arguments: [(10.0, UInt64(1)), (14, 2), (18, 3), (22, 4)])
    func equalBurstsOfOneToneAreNotCountedInPairs(bpm: Double, seed: UInt64) {
        // The same envelope with a tone that does not alternate: every burst may be a breath, so the rate must
        // not come out as the pair rate.
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let b = Self.bursts(bpm: bpm, inhaleTone: 3, exhaleTone: 3, seed: seed)
        if let result = analyzer.analyze(b.level[...], tone: b.tone[...]) {
            #expect(abs(result.bpm - 2 * b.bpm) < 2, "\(result.bpm) for bursts at \(2 * b.bpm)")
        }
    }

    @Test(arguments: [(10.0, UInt64(1)), (14, 2), (18, 3), (22, 4)])
    func equalBurstsOfOneToneFollowASteadyNightsRate(bpm: Double, seed: UInt64) throws {
        // Nothing in the window tells one breath of two equal bursts from breathing at twice the rate; a night
        // that has breathed at the pair rate for its last windows (`prior`) does.
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let b = Self.bursts(bpm: bpm, inhaleTone: 3, exhaleTone: 3, seed: seed)
        let alone = analyzer.analyze(b.level[...], tone: b.tone[...])
        let answer = analyzer.analyze(b.level[...], tone: b.tone[...], prior: b.bpm * 1.04)
        let steady = try #require(answer)
        #expect(abs(steady.bpm - b.bpm) < 1 && steady.doubledByPrior, "\(steady.bpm) for breaths at \(b.bpm)")
        // A night at the burst rate, or at a rate unrelated to it, changes nothing.
        for prior in [2 * b.bpm, 1.4 * b.bpm] {
            #expect(analyzer.analyze(b.level[...], tone: b.tone[...], prior: prior) == alone, "prior \(prior)")
        }
    }

    @Test(arguments: [30.0, 40.0])
    func alternateShallowBreathsStayUnhalvedWhenTheDeepOnesAreBrighter(bpm: Double) {
        // Deep and shallow breaths 8 dB apart whose tone follows their depth (louder flow, more hiss): the
        // levels already differ, so the tone does not decide, and the rate must not come out halved.
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let envelope = OctaveDecisionTests.alternating(periodSec: 60 / bpm, deepDb: 20, shallowDb: 12, seed: 3)
        let tone = envelope.values.map { $0 > 16 ? Float(4) : $0 > 8 ? -4 : 0 }
        if let result = analyzer.analyze(envelope.values[...], tone: tone[...]) {
            #expect(abs(result.bpm - envelope.bpm) < 1, "\(result.bpm) for \(envelope.bpm)")
        }
    }

    @Test func toneFromTheFeatureBandsCountsBrightAndDarkBurstsAsOneBreath() throws {
        // The whole path: audio → engine features → FeatureEnvelope's tone → the analyser. The audio envelope
        // has no tone and cannot tell.
        let signal = SyntheticBreathing.equalBursts(bpm: 15, seconds: 60, seed: 5)
        let estimates = BreathingRateEstimator.run([signal]).estimates
        let e = try #require(estimates.first)
        #expect(estimates.count == 1)
        #expect(abs(e.bpm - 15) < 1.2, "\(e.bpm) for 15")
        var audio = BreathingRateEstimator.Configuration()
        audio.envelopeSource = .audio
        for other in BreathingRateEstimator.run([signal], configuration: audio).estimates {
            #expect(abs(other.bpm - 30) < 2.5, "audio envelope: \(other.bpm) for bursts at 30")
        }
        // Both bursts of one spectrum: no pairing.
        let same = SyntheticBreathing.equalBursts(bpm: 15, seconds: 60, sameTone: true, seed: 5)
        for other in BreathingRateEstimator.run([same]).estimates {
            #expect(abs(other.bpm - 30) < 2.5, "one tone: \(other.bpm) for bursts at 30")
        }
    }
}
