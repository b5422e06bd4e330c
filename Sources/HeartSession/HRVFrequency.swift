import Foundation

/// Frequency-domain HRV of a window of NN intervals: power in the VLF, LF and HF bands (ms²) of the interval
/// series' spectrum (Task Force 1996: VLF 0.003–0.04 Hz, LF 0.04–0.15 Hz, HF 0.15–0.4 Hz).
public struct HRVFrequencyDomain: Sendable, Hashable, Codable {
    public var vlf: Double
    public var lf: Double
    public var hf: Double
    public var lfHfRatio: Double
    /// LF and HF in normalised units: 100 · LF / (LF + HF), 100 · HF / (LF + HF).
    public var lfnu: Double
    public var hfnu: Double
    /// VLF + LF + HF.
    public var totalPower: Double
}

extension HRV {
    /// The shortest window (s) the frequency domain is reported for: two minutes, as the Task Force recommends for
    /// LF (about ten cycles of its lowest frequency would need four, so LF from short windows is rough).
    public static let minimumSpectrumSeconds = 120.0

    /// Frequency-domain HRV of `nn` (ms), by Welch's method on the evenly resampled interval series — the
    /// convention of hrv-analysis's `get_frequency_domain_features` (Champseix et al.; the default `welch` method):
    /// 1. each interval is placed at the time its beat ends, from the first interval's end (t = cumulative sum − the
    ///    first interval);
    /// 2. the series is linearly interpolated at 4 Hz from 0 up to (excluding) the last time, and its mean removed;
    /// 3. Welch's estimate: 256-sample segments (the whole series if shorter) overlapping by half, each with its mean
    ///    removed and a periodic Hann window, zero-padded to 4,096 points, one-sided power spectral density
    ///    (scipy.signal.welch's `density` scaling), averaged;
    /// 4. band powers by the trapezoidal rule over the spectrum's points with f in [low, high).
    /// nil when the window is shorter than `minimumSpectrumSeconds` or holds invalid intervals.
    public static func frequencyDomain(_ nn: [Double], minimumSeconds: Double = minimumSpectrumSeconds)
        -> HRVFrequencyDomain? {
        guard nn.count >= 3, nn.allSatisfy({ $0.isFinite && $0 > 0 }) else { return nil }
        var times = [Double](repeating: 0, count: nn.count)
        var sum = 0.0
        for i in nn.indices { sum += nn[i]; times[i] = (sum - nn[0]) / 1000 }
        guard let last = times.last, last >= minimumSeconds else { return nil }
        let fs = 4.0
        // np.arange(0, last, 1/fs)
        let count = Int((last * fs).rounded(.up))
        var x = [Double](repeating: 0, count: count)
        var j = 0
        for k in 0..<count {
            let t = Double(k) / fs
            while j + 1 < times.count - 1 && times[j + 1] < t { j += 1 }
            let (t0, t1) = (times[j], times[j + 1])
            x[k] = t1 > t0 ? nn[j] + (nn[j + 1] - nn[j]) * (t - t0) / (t1 - t0) : nn[j]
        }
        let mean = x.reduce(0, +) / Double(count)
        for k in 0..<count { x[k] -= mean }
        let (freqs, psd) = welch(x, fs: fs, segment: 256, nfft: 4096, maximumFrequency: 0.41)
        func band(_ lo: Double, _ hi: Double) -> Double {
            var total = 0.0
            var previous: (f: Double, p: Double)?
            for (f, p) in zip(freqs, psd) where f >= lo && f < hi {
                if let q = previous { total += (f - q.f) * (p + q.p) / 2 }
                previous = (f, p)
            }
            return total
        }
        let vlf = band(0.003, 0.04), lf = band(0.04, 0.15), hf = band(0.15, 0.4)
        return HRVFrequencyDomain(vlf: vlf, lf: lf, hf: hf, lfHfRatio: hf > 0 ? lf / hf : .infinity,
                                  lfnu: 100 * lf / (lf + hf), hfnu: 100 * hf / (lf + hf), totalPower: vlf + lf + hf)
    }

    /// Welch's one-sided power spectral density of `x` at the bins k · fs / nfft up to `maximumFrequency`, as
    /// scipy.signal.welch(x, fs, window='hann', nperseg=segment, nfft=nfft) computes it (constant detrend per segment,
    /// half overlap, density scaling, mean over segments). The DFT is evaluated directly at the bins needed.
    static func welch(_ x: [Double], fs: Double, segment: Int, nfft: Int, maximumFrequency: Double)
        -> (freqs: [Double], psd: [Double]) {
        let n = min(segment, x.count)
        let step = n - n / 2
        let segments = (x.count - n) / step + 1
        let window = (0..<n).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n)) }
        let scale = 1 / (fs * window.reduce(0) { $0 + $1 * $1 })
        let bins = min(nfft / 2, Int((maximumFrequency * Double(nfft) / fs).rounded(.up)))
        let basis = DFTBasis.shared(length: n, nfft: nfft, bins: bins)
        var psd = [Double](repeating: 0, count: bins + 1)
        var w = [Double](repeating: 0, count: n)
        for s in 0..<segments {
            let start = s * step
            let mean = x[start..<(start + n)].reduce(0, +) / Double(n)
            for i in 0..<n { w[i] = (x[start + i] - mean) * window[i] }
            w.withUnsafeBufferPointer { w in
                basis.cos.withUnsafeBufferPointer { c in
                    basis.sin.withUnsafeBufferPointer { sn in
                        for k in 0...bins {
                            var re = 0.0, im = 0.0
                            let row = k * n
                            for i in 0..<n {
                                re += w[i] * c[row + i]
                                im -= w[i] * sn[row + i]
                            }
                            let onesided = (k == 0 || (k == nfft / 2)) ? 1.0 : 2.0
                            psd[k] += onesided * scale * (re * re + im * im)
                        }
                    }
                }
            }
        }
        for k in psd.indices { psd[k] /= Double(segments) }
        return ((0...bins).map { Double($0) * fs / Double(nfft) }, psd)
    }
}

/// The DFT's cosines and sines at bins 0...`bins` of an `nfft`-point transform for the `length` samples of a segment,
/// row by row (cos(2π·((k·i) mod nfft)/nfft)): computed once per shape and shared, so that a night's frames each cost
/// only their dot products.
final class DFTBasis: @unchecked Sendable {
    let cos: [Double]
    let sin: [Double]

    private init(length: Int, nfft: Int, bins: Int) {
        var c = [Double](repeating: 0, count: (bins + 1) * length), s = c
        for k in 0...bins {
            for i in 0..<length {
                let angle = 2 * Double.pi * Double((k * i) % nfft) / Double(nfft)
                c[k * length + i] = Foundation.cos(angle)
                s[k * length + i] = Foundation.sin(angle)
            }
        }
        cos = c; sin = s
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [[Int]: DFTBasis] = [:]

    static func shared(length: Int, nfft: Int, bins: Int) -> DFTBasis {
        lock.withLock {
            if let b = cache[[length, nfft, bins]] { return b }
            let b = DFTBasis(length: length, nfft: nfft, bins: bins)
            cache[[length, nfft, bins]] = b
            return b
        }
    }
}
