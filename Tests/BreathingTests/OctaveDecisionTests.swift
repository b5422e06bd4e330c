import Foundation
import Testing
@testable import Breathing

/// The analyser's choice between a rate, half of it and twice it (docs/0006-breathing.md, "Octave
/// decision"): envelopes (dB at 10 Hz) of fast and slow breathing, of breathing whose alternate breaths are
/// shallower, and of heart sounds alone.
@Suite struct OctaveDecisionTests {
    typealias Noise = SyntheticBreathing.Noise

    /// Cycle start times (s) over `seconds`, each cycle `periodSec` ± 4 %, and the true mean rate of the
    /// complete cycles.
    static func cycles(periodSec: Double, seconds: Double, rng: inout Noise) -> (starts: [Double], bpm: Double) {
        var starts = [0.0]
        while starts.last! < seconds { starts.append(starts.last! + periodSec * (1 + 0.08 * (rng.uniform() - 0.5))) }
        let complete = starts.filter { $0 <= seconds }
        return (starts, 60 * Double(complete.count - 1) / complete.last!)
    }

    /// Breaths: an inhale burst of at most `inhaleSec` (and 40 % of the cycle) at `inhaleDb`, an exhale of at
    /// most `exhaleSec` (45 %) at `exhaleDb`, then a pause at 0 dB. Short bursts in a long cycle give slow
    /// breathing its long pauses.
    static func breaths(periodSec: Double, seconds: Double = 60, inhaleSec: Double = .infinity,
                        exhaleSec: Double = .infinity, inhaleDb: Float = 20, exhaleDb: Float, seed: UInt64)
        -> (values: [Float], bpm: Double) {
        var rng = Noise(seed: seed)
        let (starts, bpm) = cycles(periodSec: periodSec, seconds: seconds, rng: &rng)
        var cycle = 0
        let values: [Float] = (0..<Int(seconds * 10)).map { i in
            let t = Double(i) / 10
            while starts[cycle + 1] <= t { cycle += 1 }
            let length = starts[cycle + 1] - starts[cycle], d = t - starts[cycle]
            let inhale = min(inhaleSec, 0.4 * length), exhale = min(exhaleSec, 0.45 * length)
            return d < inhale ? inhaleDb : d < inhale + exhale ? exhaleDb : 0
        }
        return (withFloorNoise(values, seed: seed), bpm)
    }

    /// 60 s of envelope whose level is `level(cycle index, phase within the cycle 0..<1)`.
    static func cyclic(periodSec: Double, seed: UInt64, level: (Int, Double) -> Float) -> (values: [Float], bpm: Double) {
        var rng = Noise(seed: seed)
        let (starts, bpm) = cycles(periodSec: periodSec, seconds: 60, rng: &rng)
        var cycle = 0
        let values: [Float] = (0..<600).map { i in
            let t = Double(i) / 10
            while starts[cycle + 1] <= t { cycle += 1 }
            return level(cycle, (t - starts[cycle]) / (starts[cycle + 1] - starts[cycle]))
        }
        return (withFloorNoise(values, seed: seed), bpm)
    }

    /// Fast breathing whose alternate breaths are shallower (inhale at `deepDb`, then `shallowDb`), each
    /// with a weak exhale.
    static func alternating(periodSec: Double, deepDb: Float, shallowDb: Float, seed: UInt64)
        -> (values: [Float], bpm: Double) {
        cyclic(periodSec: periodSec, seed: seed) { cycle, phase in
            phase < 0.4 ? (cycle % 2 == 0 ? deepDb : shallowDb) : phase < 0.85 ? 4 : 0
        }
    }

    /// One breath as two bursts of one level half a cycle apart, different in length: an inhale over the first
    /// 35 % of the cycle, an exhale over 50–75 %, each at 20 dB. The burst rate is the strongest spectral line,
    /// the cycle rate holds only 10–20 % of its power, but the envelope repeats clearly better over a cycle than
    /// over a burst, and the burst levels do not alternate.
    static func twoBursts(periodSec: Double, seed: UInt64) -> (values: [Float], bpm: Double) {
        cyclic(periodSec: periodSec, seed: seed) { _, phase in phase < 0.35 || (phase >= 0.5 && phase < 0.75) ? 20 : 0 }
    }

    /// Heart sounds alone: S1 (+12 dB) and S2 (+8 dB, 0.3 s later) spread over the two 100-ms samples they
    /// fall between, at `bpm` ± 3 % beat to beat.
    static func heart(bpm: Double, seed: UInt64) -> [Float] {
        var rng = Noise(seed: seed)
        var values = [Float](repeating: 0, count: 600)
        var t = 0.05
        while t < 60 {
            for (offset, db) in [(0.0, Float(12)), (0.3, Float(8))] {
                let x = (t + offset) * 10, k = Int(x), fraction = Float(x - Double(k))
                if k + 1 < values.count {
                    values[k] = max(values[k], db * (1 - fraction))
                    values[k + 1] = max(values[k + 1], db * fraction)
                }
            }
            t += 60 / bpm * (1 + 0.06 * (rng.uniform() - 0.5))
        }
        return withFloorNoise(values, seed: seed)
    }

    /// Adds ±1 dB of uniform noise to every sample (a recording's noise floor is never constant).
    static func withFloorNoise(_ values: [Float], seed: UInt64) -> [Float] {
        var rng = Noise(seed: seed + 100)
        return values.map { $0 + Float(2 * (rng.uniform() - 0.5)) }
    }

    @Test(arguments: [36.0, 40.0, 44.0])
    func fastBreathingWithAWeakExhaleIsNotHalved(bpm: Double) throws {
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let envelope = Self.breaths(periodSec: 60 / bpm, exhaleDb: 4, seed: 3)
        let answer = analyzer.analyze(envelope.values[...])
        let result = try #require(answer)
        #expect(abs(result.bpm - envelope.bpm) < 1, "\(result.bpm) for \(envelope.bpm)")
    }

    @Test(arguments: [50.0, 56.0])
    func breathingFasterThanTheRangeIsRefusedNotHalved(bpm: Double) {
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        #expect(analyzer.analyze(Self.breaths(periodSec: 60 / bpm, exhaleDb: 4, seed: 3).values[...]) == nil)
    }

    @Test(arguments: [30.0, 40.0])
    func alternateShallowBreathsAreNotTakenForExhales(bpm: Double) {
        // Deep and shallow breaths 8 dB apart: the envelope repeats best every two breaths, but each breath
        // is a separate rhythm; the rate must not come out halved (a refusal is acceptable).
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let envelope = Self.alternating(periodSec: 60 / bpm, deepDb: 20, shallowDb: 12, seed: 3)
        if let result = analyzer.analyze(envelope.values[...]) {
            #expect(abs(result.bpm - envelope.bpm) < 1, "\(result.bpm) for \(envelope.bpm)")
        }
    }

    @Test(arguments: [12.0, 18.0, 24.0])
    func twoBurstsThatDifferAreOneBreathEvenWithAWeakFundamental(bpm: Double) throws {
        let envelope = Self.twoBursts(periodSec: 60 / bpm, seed: 5)
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let answer = analyzer.analyze(envelope.values[...])
        let result = try #require(answer)
        #expect(abs(result.bpm - envelope.bpm) < 1, "\(result.bpm) for \(envelope.bpm)")
        // The weaker fundamental is what confirms the cycle: with the full share required, no value.
        var strict = BreathingRateAnalyzer.Parameters()
        strict.cycleWeakFundamentalShare = strict.cycleFundamentalShare
        var strictAnalyzer = BreathingRateAnalyzer(parameters: strict, capacity: 600)
        #expect(strictAnalyzer.analyze(envelope.values[...]) == nil)
    }

    /// Resting breath with the inhale:exhale ratio of about 1:2, as an envelope of audio: a raised-sine inhale
    /// burst 20 dB over the floor over the first 27 % of the cycle, a pause, then a raised-sine exhale
    /// `exhaleBelowDb` quieter over 32–87 %.
    static func longQuietExhale(periodSec: Double, exhaleBelowDb: Float, seed: UInt64) -> (values: [Float], bpm: Double) {
        cyclic(periodSec: periodSec, seed: seed) { _, phase in
            func raisedSine(_ from: Double, _ to: Double) -> Double {
                phase >= from && phase < to ? pow(sin(Double.pi * (phase - from) / (to - from)), 2) : 0
            }
            let power = 1 + 100 * raisedSine(0, 0.27) + pow(10, Double(20 - exhaleBelowDb) / 10) * raisedSine(0.32, 0.87)
            return Float(10 * log10(power))
        }
    }

    @Test(arguments: [(8.0, Float(8)), (12, 10), (18, 8), (22, 10)])
    func aQuietLongExhaleAfterAShortInhaleIsOneBreath(bpm: Double, exhaleBelowDb: Float) throws {
        let envelope = Self.longQuietExhale(periodSec: 60 / bpm, exhaleBelowDb: exhaleBelowDb, seed: 7)
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let answer = analyzer.analyze(envelope.values[...])
        let result = try #require(answer)
        #expect(abs(result.bpm - envelope.bpm) < 1, "\(result.bpm) for \(envelope.bpm)")
        // The quieter burst's length is what confirms the cycle: without that cue, no value.
        var without = BreathingRateAnalyzer.Parameters()
        without.cycleQuietWidthRatio = .infinity
        var withoutAnalyzer = BreathingRateAnalyzer(parameters: without, capacity: 600)
        #expect(withoutAnalyzer.analyze(envelope.values[...]) == nil)
    }

    @Test(arguments: [(24.0, Float(6)), (30, 8), (40, 8)])
    func aShallowBreathBetweenDeepOnesIsNotTakenForAnExhale(bpm: Double, shallowBelowDb: Float) {
        // One burst per breath, every other breath quieter but as long: the envelope repeats best every two
        // breaths, and the quieter burst is not the longer, so the cue for a long exhale must not halve the rate
        // (a refusal is acceptable).
        let envelope = Self.cyclic(periodSec: 60 / bpm, seed: 9) { cycle, phase in
            phase < 0.5 ? (cycle % 2 == 0 ? 20 : 20 - shallowBelowDb) : 0
        }
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        if let result = analyzer.analyze(envelope.values[...]) {
            #expect(abs(result.bpm - envelope.bpm) < 1, "\(result.bpm) for \(envelope.bpm)")
        }
    }

    @Test(arguments: [4.5, 5.0, 7.0, 9.0])
    func slowBreathingWithAnAudibleExhaleIsNotDoubled(bpm: Double) throws {
        // 2.5-s inhale, 3-s exhale 4 dB weaker, then a long pause.
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        let envelope = Self.breaths(periodSec: 60 / bpm, inhaleSec: 2.5, exhaleSec: 3, exhaleDb: 16, seed: 4)
        let answer = analyzer.analyze(envelope.values[...])
        let result = try #require(answer)
        #expect(abs(result.bpm - envelope.bpm) < 0.5, "\(result.bpm) for \(envelope.bpm)")
    }

    @Test(arguments: [(50.0, UInt64(1)), (62, 2), (70, 3), (74, 3), (80, 1), (84, 1), (90, 2)])
    func heartSoundsAloneGiveNoRate(bpm: Double, seed: UInt64) {
        // Twice the beat period also repeats, and 25–45 beats/min lie in the breathing range: the octave
        // check must see that the rhythm is the heart's.
        var analyzer = BreathingRateAnalyzer(capacity: 600)
        #expect(analyzer.analyze(Self.heart(bpm: bpm, seed: seed)[...]) == nil)
    }
}
