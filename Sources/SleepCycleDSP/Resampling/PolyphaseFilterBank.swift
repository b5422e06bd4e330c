// The precomputed phase tables of the polyphase resampler (a Kaiser-windowed sinc prototype).
import Foundation

/// Quality targets of the resampler's anti-aliasing / anti-imaging filter.
///
/// Edges are fractions of the *lower* of the two Nyquist frequencies (8 kHz when resampling to 16 kHz).
/// The defaults pass 0–7.2 kHz (ripple ≪ 0.1 dB) and reject ≥ 80 dB from 8 kHz up, so no input component above
/// 8 kHz folds back below 8 kHz (see docs/0002-audio-input-resampling.md for the measured figures).
public struct ResamplerQuality: Sendable, Hashable {
    /// Pass-band edge as a fraction of the lower Nyquist frequency.
    public var passbandEdge: Double
    /// Stop-band edge as a fraction of the lower Nyquist frequency (> 1 allows folding into the transition band).
    public var stopbandEdge: Double
    /// Design stop-band attenuation in dB (Kaiser formula; a few dB of margin over the guaranteed figure).
    public var attenuationDB: Double

    public init(passbandEdge: Double = 0.9, stopbandEdge: Double = 1.0, attenuationDB: Double = 86) {
        self.passbandEdge = passbandEdge; self.stopbandEdge = stopbandEdge; self.attenuationDB = attenuationDB
    }

    public static let standard = ResamplerQuality()
}

/// Phase tables for rational resampling by L/M (Crochiere & Rabiner, *Multirate Digital Signal Processing*, 1983,
/// ch. 4.3: the polyphase structure for sampling-rate conversion by a rational factor).
///
/// The prototype is the windowed sinc h(t) = 2fc · sinc(2fc·t) · w(t / T) (Oppenheim & Schafer §7.6.1), t in input
/// samples, cutoff fc at the lower Nyquist frequency (the middle of the transition band), w the Kaiser window of
/// half-width T sized by `KaiserDesign.order`. Output k lies at input time t_k = k·M/L = n0 + p/L; its taps are
/// h(p/L − j) for input samples n0 + j, j ∈ [−H+1, H], stored per phase p, zero-padded to a multiple of 8 and
/// normalised to unit DC gain so that every phase passes a constant exactly.
/// When the table would exceed `maxCoefficients` (rates with a tiny gcd with 16 kHz, e.g. 44 101 Hz, have L = 16 000
/// phases) the phase is quantised to the nearest of P < L steps, P = maxCoefficients / taps (timing error
/// ≤ 1/(2P) input sample: for 191 999 Hz, P ≈ 3 200 and a 7.2 kHz tone's phase error is 3.7e-5 rad, −89 dB).
struct PolyphaseFilterBank: Sendable {
    static let maxCoefficients = 1 << 22

    /// Up-sampling factor L and down-sampling factor M (L/M = outputRate/inputRate in lowest terms).
    let upFactor: Int
    let downFactor: Int
    /// Number of stored phases (= L unless quantised).
    let phaseCount: Int
    /// H: taps reach from n0 − H + 1 to n0 + H.
    let halfLength: Int
    /// Taps per phase in the table (2H rounded up to a multiple of 8; the extra taps are zero).
    let tapStride: Int
    /// phaseCount × tapStride coefficients, row-major by phase.
    let coefficients: [Float]
    /// Memory held by the table (what `PolyphaseFilterBankCache` budgets).
    var byteCount: Int { coefficients.count * MemoryLayout<Float>.stride }

    init(inputRate: Int, outputRate: Int, quality: ResamplerQuality) {
        let g = Self.gcd(inputRate, outputRate)
        upFactor = outputRate / g
        downFactor = inputRate / g

        let lowRate = Double(min(inputRate, outputRate))
        let fsIn = Double(inputRate)
        let nyquistLow = lowRate / 2
        let cutoff = nyquistLow * (quality.passbandEdge + quality.stopbandEdge) / 2 / fsIn   // cycles / input sample
        let transition = nyquistLow * (quality.stopbandEdge - quality.passbandEdge) / fsIn
        let order = KaiserDesign.order(attenuationDB: quality.attenuationDB, transitionCyclesPerSample: transition)
        let halfWidth = order / 2
        let beta = KaiserDesign.beta(attenuationDB: quality.attenuationDB)
        halfLength = max(1, Int(halfWidth.rounded(.up)))
        tapStride = (2 * halfLength + 7) / 8 * 8
        phaseCount = min(upFactor, max(64, Self.maxCoefficients / tapStride))

        var table = [Float](repeating: 0, count: phaseCount * tapStride)
        var row = [Double](repeating: 0, count: 2 * halfLength)
        for p in 0..<phaseCount {
            let frac = Double(p) / Double(phaseCount)
            var sum = 0.0
            for i in 0..<(2 * halfLength) {
                let t = frac - Double(i - halfLength + 1)
                let x = 2 * cutoff * t
                let sinc = x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
                let value = 2 * cutoff * sinc * KaiserDesign.window(t / halfWidth, beta: beta)
                row[i] = value
                sum += value
            }
            for i in 0..<(2 * halfLength) { table[p * tapStride + i] = Float(row[i] / sum) }
        }
        coefficients = table
    }

    static func gcd(_ a: Int, _ b: Int) -> Int {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x
    }
}
