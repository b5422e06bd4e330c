@testable import Breathing

/// Deterministic test signals: breath sounds (band-passed noise bursts with inhale/exhale envelopes and
/// per-cycle rate jitter) plus background noise, at 16 kHz.
enum SyntheticBreathing {
    /// xorshift64* generator: reproducible noise without Foundation randomness.
    struct Noise {
        var state: UInt64
        init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
        mutating func uniform() -> Double {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return Double((state &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
        }
        /// Approximately normal (sum of four uniforms), unit variance.
        mutating func normal() -> Float {
            Float((uniform() + uniform() + uniform() + uniform() - 2) * 1.7320508)
        }
    }

    /// Breathing at `bpm` for `seconds`, with background noise at `snrDb` (nil: none) measured over the
    /// whole signal. Inhale: 300–2500 Hz noise for ~40 % of the cycle; exhale: 200–1200 Hz noise at 0.6× for
    /// ~45 %; then a pause. Each cycle's length is jittered by up to ±5 %.
    static func breathing(bpm: Double, seconds: Double, snrDb: Double?, seed: UInt64) -> [Float] {
        let fs = 16_000.0
        let n = Int(seconds * fs)
        var out = [Float](repeating: 0, count: n)
        var rng = Noise(seed: seed)
        var inHP = Biquad(.highPass, cutoffHz: 300, sampleRate: fs), inLP = Biquad(.lowPass, cutoffHz: 2500, sampleRate: fs)
        var exHP = Biquad(.highPass, cutoffHz: 200, sampleRate: fs), exLP = Biquad(.lowPass, cutoffHz: 1200, sampleRate: fs)
        var t = 0.3 * 60 / bpm
        while t < seconds {
            let period = 60 / bpm * (1 + 0.1 * (rng.uniform() - 0.5))
            let phases: [(start: Double, length: Double, gain: Float, inhale: Bool)] = [
                (t, 0.4 * period, 1.0, true), (t + 0.4 * period, 0.45 * period, 0.6, false)]
            for phase in phases {
                let i0 = Int(phase.start * fs), m = Int(phase.length * fs)
                for j in 0..<m where i0 + j < n {
                    let e = Float(sin(Double.pi * Double(j) / Double(m)))
                    let v = rng.normal()
                    let y = phase.inhale ? inLP.process(inHP.process(v)) : exLP.process(exHP.process(v))
                    out[i0 + j] += phase.gain * e * e * y
                }
            }
            t += period
        }
        if let snrDb { addNoise(to: &out, snrDb: snrDb, seed: seed &+ 1) }
        return out
    }

    /// Inhale and exhale as two bursts of the same level and length, evenly spaced (each 40 % of the cycle,
    /// 10 % pauses), told apart only by their spectra: the inhale bright (800–2000 Hz), the exhale dark
    /// (300–700 Hz) — or, with `sameTone`, both 300–2000 Hz. Each burst's noise has unit power before its
    /// envelope, so the two are equally loud in the breathing band.
    static func equalBursts(bpm: Double, seconds: Double, sameTone: Bool = false, seed: UInt64) -> [Float] {
        let fs = 16_000.0
        let n = Int(seconds * fs)
        var rng = Noise(seed: seed)
        func band(_ low: Double, _ high: Double) -> [Float] {
            var hp = Biquad(.highPass, cutoffHz: low, sampleRate: fs), lp = Biquad(.lowPass, cutoffHz: high, sampleRate: fs)
            let y = (0..<n).map { _ in lp.process(hp.process(rng.normal())) }
            let rms = (y.reduce(0.0) { $0 + Double($1 * $1) } / Double(max(1, n))).squareRoot()
            return y.map { $0 / Float(max(rms, 1e-9)) }
        }
        let bright = sameTone ? band(300, 2000) : band(800, 2000)
        let dark = sameTone ? band(300, 2000) : band(300, 700)
        var out = [Float](repeating: 0, count: n)
        var t = 0.0
        while t < seconds {
            let period = 60 / bpm * (1 + 0.1 * (rng.uniform() - 0.5))
            for (offset, source) in [(0.0, bright), (0.5, dark)] {
                let i0 = Int((t + offset * period) * fs), m = Int(0.4 * period * fs)
                for j in 0..<m where i0 + j < n {
                    let e = Float(sin(Double.pi * Double(j) / Double(m)))
                    out[i0 + j] = 0.1 * e * e * source[i0 + j]
                }
            }
            t += period
        }
        return out
    }

    /// Adds pink-ish background noise (white plus a low-passed component) at `snrDb` below the signal.
    static func addNoise(to x: inout [Float], snrDb: Double, seed: UInt64) {
        var rng = Noise(seed: seed)
        var lp = Biquad(.lowPass, cutoffHz: 400, sampleRate: 16_000)
        var noise = [Float](repeating: 0, count: x.count)
        for i in noise.indices { let w = rng.normal(); noise[i] = 0.5 * w + 2 * lp.process(w) }
        let ps = x.reduce(0.0) { $0 + Double($1 * $1) }, pn = noise.reduce(0.0) { $0 + Double($1 * $1) }
        let gain = Float((ps / pn / pow10(snrDb / 10)).squareRoot())
        for i in x.indices { x[i] += gain * noise[i] }
    }

    static func whiteNoise(seconds: Double, seed: UInt64) -> [Float] {
        var rng = Noise(seed: seed)
        return (0..<Int(seconds * 16_000)).map { _ in 0.05 * rng.normal() }
    }

    private static func pow10(_ x: Double) -> Double { exp(x * 2.302585092994046) }
}

import Foundation
