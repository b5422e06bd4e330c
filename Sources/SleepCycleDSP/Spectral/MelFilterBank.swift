#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Slaney-style mel filter bank, stored sparsely: filter `m` has weights only for bins `lo[m]...hi[m]`.
///
/// Definition: librosa 0.11 `filters.mel(sr, n_fft, n_mels, fmin, fmax, htk=False, norm='slaney')`, i.e. the
/// Auditory Toolbox mel scale of M. Slaney (1998, "Auditory Toolbox v2", Interval Research TR-1998-010):
/// linear below 1 kHz (`mel = f / (200/3)`), logarithmic above (`15 + ln(f/1000) / (ln 6.4 / 27)`);
/// `nMels + 2` points equally spaced in mel between `fmin` and `fmax`; triangular filters over the
/// `rfftfreq` bin centres, each scaled by `2 / (f[m+2] − f[m])` (Slaney area normalisation).
/// Weights are computed in double precision and stored as Float (librosa's default dtype float32).
public struct MelFilterBank: Sendable {
    public let melCount: Int
    public let binCount: Int
    /// First and last bin (inclusive) with a non-zero weight; an empty filter has `hi < lo`.
    public let lo: [Int]
    public let hi: [Int]
    /// Offset of filter `m`'s first weight in `weights`.
    public let offset: [Int]
    /// All filters' non-zero weights, concatenated.
    public let weights: [Float]

    public init(sampleRate: Int, fftSize: Int, melCount: Int, fmin: Double = 0, fmax: Double? = nil) {
        let fmax = fmax ?? Double(sampleRate) / 2
        let binCount = fftSize / 2 + 1
        let fftFreqs = (0..<binCount).map { Double($0) * Double(sampleRate) / Double(fftSize) }
        let minMel = Self.hzToMel(fmin), maxMel = Self.hzToMel(fmax)
        let melF = (0..<(melCount + 2)).map {
            Self.melToHz(minMel + (maxMel - minMel) * Double($0) / Double(melCount + 1))
        }
        var lo = [Int](), hi = [Int](), offset = [Int](), weights = [Float]()
        for m in 0..<melCount {
            let lower = melF[m], centre = melF[m + 1], upper = melF[m + 2]
            let enorm = 2.0 / (upper - lower)
            var first = -1, last = -2
            var row = [Float]()
            for k in 0..<binCount {
                let down = (fftFreqs[k] - lower) / (centre - lower)
                let up = (upper - fftFreqs[k]) / (upper - centre)
                let w = max(0, min(down, up))
                if w > 0 {
                    if first < 0 { first = k }
                    // Bins between first and last are contiguous for a triangle; keep zeros if any.
                    while last >= 0 && last + 1 < k { row.append(0); last += 1 }
                    row.append(Float(w * enorm)); last = k
                }
            }
            if first < 0 { first = 0; last = -1 }
            lo.append(first); hi.append(last); offset.append(weights.count)
            weights.append(contentsOf: row)
        }
        self.melCount = melCount; self.binCount = binCount
        self.lo = lo; self.hi = hi; self.offset = offset; self.weights = weights
    }

    /// Slaney mel of a frequency in Hz (librosa `hz_to_mel(htk=False)`).
    public static func hzToMel(_ f: Double) -> Double {
        let fSp = 200.0 / 3, minLogHz = 1000.0, minLogMel = minLogHz / fSp, logStep = log(6.4) / 27
        return f >= minLogHz ? minLogMel + log(f / minLogHz) / logStep : f / fSp
    }

    /// Frequency in Hz of a Slaney mel (librosa `mel_to_hz(htk=False)`).
    public static func melToHz(_ m: Double) -> Double {
        let fSp = 200.0 / 3, minLogHz = 1000.0, minLogMel = minLogHz / fSp, logStep = log(6.4) / 27
        return m >= minLogMel ? minLogHz * exp(logStep * (m - minLogMel)) : fSp * m
    }
}

/// Orthonormal DCT-II matrix, `rows × n`, row-major: `C[k][j] = s_k · cos(π k (2j + 1) / (2n))` with
/// `s_0 = √(1/n)`, `s_k = √(2/n)`. Same as `scipy.fft.dct(x, type=2, norm='ortho')`, which librosa 0.11
/// `feature.mfcc(dct_type=2, norm='ortho')` applies to the dB mel spectrogram.
public func dctIIOrthoMatrix(rows: Int, n: Int) -> [Float] {
    var m = [Float](repeating: 0, count: rows * n)
    for k in 0..<rows {
        let s = k == 0 ? (1.0 / Double(n)).squareRoot() : (2.0 / Double(n)).squareRoot()
        for j in 0..<n { m[k * n + j] = Float(s * cos(Double.pi * Double(k) * Double(2 * j + 1) / Double(2 * n))) }
    }
    return m
}
