import Foundation

/// Run-time stand-ins for the Walch et al. 2019 features, computed at 30-s epoch resolution.
///
/// Walch's preprocessing (ojwalch/sleep_classifiers, `source/preprocessing/`; summarised in
/// the development data's staging README, see Benchmarks/Scripts/staging/) works on 1-s signals; here the same operations are applied to per-epoch
/// values, which is an approximation (documented in docs/0007-staging-statistics-alarm.md). Because the model
/// z-scores `count` and `hr` within the night, only their shape over the night matters, not their units.
public enum WalchProxies {
    /// Gaussian-weighted mean (σ = 50 s) over ±(285 s + one epoch) around each epoch, like Walch's count
    /// feature. Windows are truncated to the epochs given (online use sees only the past).
    public static func smoothedCount(_ activity: [Double], epochSeconds: Double = 30) -> [Double] {
        let half = Int(((285 + epochSeconds) / epochSeconds).rounded(.down))
        let sigma = 50 / epochSeconds
        let weights = (-half...half).map { Foundation.exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        return activity.indices.map { i in
            var sum = 0.0, wsum = 0.0
            for (k, d) in (-half...half).enumerated() where activity.indices.contains(i + d) {
                sum += weights[k] * activity[i + d]; wsum += weights[k]
            }
            return sum / wsum
        }
    }

    /// Walch's heart-rate feature from per-epoch mean heart rate (bpm; nil = no sample in that epoch):
    /// fill gaps by linear interpolation (constant beyond the ends), remove the mean, band-pass with a
    /// difference of Gaussians (σ 120 s minus 0.75 × σ 600 s), divide by the 90th percentile of the absolute
    /// value, then take the standard deviation over ±285 s. Returns nil when no epoch has a heart rate.
    public static func heartRateFeature(_ bpm: [Double?], epochSeconds: Double = 30) -> [Double]? {
        let known = bpm.indices.filter { bpm[$0] != nil }
        guard let first = known.first, let last = known.last else { return nil }
        var filled = [Double](repeating: 0, count: bpm.count)
        var k = 0
        for i in bpm.indices {
            if i <= first { filled[i] = bpm[first]!; continue }
            if i >= last { filled[i] = bpm[last]!; continue }
            while known[k + 1] < i { k += 1 }
            let a = known[k], b = known[k + 1]
            filled[i] = i == b ? bpm[b]! : bpm[a]! + (bpm[b]! - bpm[a]!) * Double(i - a) / Double(b - a)
        }
        let mean = filled.reduce(0, +) / Double(filled.count)
        let centred = filled.map { $0 - mean }
        let narrow = gaussianSmooth(centred, sigma: 120 / epochSeconds)
        let wide = gaussianSmooth(centred, sigma: 600 / epochSeconds)
        var band = zip(narrow, wide).map { $0 - 0.75 * $1 }
        let sortedAbs = band.map(abs).sorted()
        let p90 = sortedAbs[min(sortedAbs.count - 1, Int((0.9 * Double(sortedAbs.count - 1)).rounded()))]
        if p90 > 1e-12 { band = band.map { $0 / p90 } }
        let half = Int((285 / epochSeconds).rounded())
        return band.indices.map { i in
            let lo = max(0, i - half), hi = min(band.count - 1, i + half)
            let w = band[lo...hi]
            let m = w.reduce(0, +) / Double(w.count)
            return (w.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(w.count)).squareRoot()
        }
    }

    /// Normalised Gaussian smoothing, kernel truncated at ±3σ and to the signal.
    static func gaussianSmooth(_ x: [Double], sigma: Double) -> [Double] {
        let half = Int((3 * sigma).rounded(.up))
        return x.indices.map { i in
            var sum = 0.0, wsum = 0.0
            for d in -half...half where x.indices.contains(i + d) {
                let w = Foundation.exp(-Double(d * d) / (2 * sigma * sigma))
                sum += w * x[i + d]; wsum += w
            }
            return sum / wsum
        }
    }

    /// Walch's fixed circadian proxy `-cos(2π (h − 5) / 24)` with h = hours since the start of the recording.
    public static func cosine(hoursSinceStart h: Double) -> Double {
        -Foundation.cos(2 * Double.pi * (h - 5) / 24)
    }
}
