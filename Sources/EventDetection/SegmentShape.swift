import Foundation

/// How a segment's sound changes from its start to its end: 39 features of the noise-subtracted mel spectra over
/// time, appended after the voicing features (`SegmentFeatures.names`).
///
/// The 61 spectral features summarise each quantity over the whole segment (means, standard deviations), so a word
/// whose vowel comes after a fricative, a cough's burst and its breathy tail, and a steady snore with the same
/// average spectrum look alike. These describe the order (the out-of-fold gain is in docs/0005):
///
/// With `S_{b,t}` the denoised mel powers (`SegmentFeatureExtractor`), `L = 10 log10 S`, 8 band groups of 5 mel bands
/// each (`G_{g,t} = Σ_{b∈g} S_{b,t}`, 0–8 kHz in mel steps) and `T` frames:
/// * `shape_t{i}_g{g}_db` (24): the segment cut into thirds in time (`[0, ⌊T/3⌋, ⌊2T/3⌋, T]`; all three the whole
///   segment when `T < 3`); per third and group `10 log10(mean_t G_{g,t}) − 10 log10(mean_t Σ_g G_{g,t})`: a 3 × 8
///   spectrogram image relative to the segment's mean level (level-free).
/// * `group{g}_std_db` (8): standard deviation over time of `10 log10 G_{g,t}`.
/// * `flux_rise_mean_db`, `flux_rise_max_db`, `flux_fall_mean_db`: with `d_{b,t} = L_{b,t} − L_{b,t−1}`, the frames'
///   mean over bands of `max(d, 0)` averaged and at its maximum, and the mean of `max(−d, 0)` (spectral flux,
///   onsets against decays).
/// * `envelope_mod_2_8hz_share`, `envelope_mod_peak_hz`: the envelope `E_t = 10 log10 Σ_b S_{b,t}` minus its mean,
///   Hann-windowed, zero-padded to 64 frames (`T ≤ 64`) or to max(256, the next power of two) and transformed; of the
///   power above 0.5 Hz, the share in 2–8 Hz (syllable rate) and the frequency of the largest bin. −1 and −1 when
///   `T < 16` (too short for a modulation).
/// * `centroid_band_slope_per_s`, `centroid_band_first_minus_last`: the spectral centroid in mel-band units,
///   `Σ_b b S_{b,t} / Σ_b S_{b,t}`: its least-squares slope against time (bands per second) and the mean of the
///   first `max(1, ⌊T/3⌋)` frames minus the mean of the last as many (0 and 0 when `T < 3`).
///
/// Cost: O(T × 40) plus an O(T × 129) real DFT by table (≤ 165 frames at the default 5-s maximum), ~20 µs per segment.
enum SegmentShape {
    static let groupCount = 8
    static let minModulationFrames = 16

    static let names: [String] = {
        var n: [String] = []
        for i in 0..<3 { for g in 0..<groupCount { n.append("shape_t\(i)_g\(g)_db") } }
        for g in 0..<groupCount { n.append("group\(g)_std_db") }
        n += ["flux_rise_mean_db", "flux_rise_max_db", "flux_fall_mean_db",
              "envelope_mod_2_8hz_share", "envelope_mod_peak_hz",
              "centroid_band_slope_per_s", "centroid_band_first_minus_last"]
        return n
    }()

    /// The cosine / sine tables of the envelope transform, by length (64, 256, larger powers of two on demand).
    private static let table64 = DFTTable(length: 64)
    private static let table256 = DFTTable(length: 256)

    /// The 39 values for `frames` frames of `spectra` (`frames × bands` denoised mel powers, all > 0).
    /// `levelsDb`, if given, must hold `10 log10f S` of the same frames (`SegmentFeatureExtractor.spectralSummaries`
    /// leaves them), so no logarithm is taken twice; the values are the same either way.
    static func features(spectra: [Float], frames: Int, bands: Int, hopSec: Double, levelsDb: [Float]? = nil) -> [Float] {
        precondition(bands == groupCount * 5 && frames >= 1 && spectra.count >= frames * bands)
        precondition(levelsDb.map { $0.count >= frames * bands } ?? true, "levelsDb must hold every frame's levels")
        let t = frames
        var groups = [Double](repeating: 0, count: t * groupCount)    // G_{g,t}, frame-major
        var envelope = [Double](repeating: 0, count: t)                // 10 log10 Σ G
        var centroid = [Double](repeating: 0, count: t)                // mel-band units
        var riseMean = 0.0, riseMax = 0.0, fall = 0.0
        var previousDb = [Double](repeating: 0, count: bands), currentDb = previousDb   // L of the last two frames
        spectra.withUnsafeBufferPointer { s in
            for f in 0..<t {
                if let levelsDb {
                    for b in 0..<bands { currentDb[b] = Double(levelsDb[f * bands + b]) }
                } else {
                    for b in 0..<bands { currentDb[b] = Double(10 * log10f(s[f * bands + b])) }
                }
                var total = 0.0, weighted = 0.0
                for g in 0..<groupCount {
                    var e = 0.0
                    for b in (g * 5)..<(g * 5 + 5) {
                        let x = Double(s[f * bands + b])
                        e += x; weighted += Double(b) * x
                    }
                    groups[f * groupCount + g] = e
                    total += e
                }
                envelope[f] = 10 * log10(total + 1e-20)
                centroid[f] = weighted / (total + 1e-20)
                if f > 0 {
                    var rise = 0.0
                    for b in 0..<bands {
                        let d = currentDb[b] - previousDb[b]
                        if d > 0 { rise += d } else { fall -= d }
                    }
                    rise /= Double(bands)
                    riseMean += rise
                    riseMax = max(riseMax, rise)
                }
                swap(&previousDb, &currentDb)
            }
        }
        var v: [Float] = []
        v.reserveCapacity(names.count)
        // The 3 × 8 image relative to the mean level.
        let n = Double(t)
        let meanTotal = groups.reduce(0, +) / n
        let reference = 10 * log10(meanTotal + 1e-20)
        let cuts = t >= 3 ? [0, t / 3, 2 * t / 3, t] : [0, t, t, t]
        for i in 0..<3 {
            let (a, b) = cuts[i + 1] > cuts[i] ? (cuts[i], cuts[i + 1]) : (0, t)
            for g in 0..<groupCount {
                var sum = 0.0
                for f in a..<b { sum += groups[f * groupCount + g] }
                v.append(Float(10 * log10(sum / Double(b - a) + 1e-20) - reference))
            }
        }
        // Each group's level over time.
        for g in 0..<groupCount {
            var sum = 0.0, sq = 0.0
            for f in 0..<t {
                let d = 10 * log10(groups[f * groupCount + g] + 1e-20)
                sum += d; sq += d * d
            }
            let mean = sum / n
            v.append(Float(max(0, sq / n - mean * mean).squareRoot()))
        }
        // Spectral flux.
        if t > 1 {
            v += [Float(riseMean / Double(t - 1)), Float(riseMax), Float(fall / (Double(t - 1) * Double(bands)))]
        } else {
            v += [0, 0, 0]
        }
        v += modulation(envelope, hopSec: hopSec)
        // The centroid's trajectory.
        if t > 2 {
            let times = (0..<t).map { Double($0) * hopSec }
            let mt = times.reduce(0, +) / n, mc = centroid.reduce(0, +) / n
            var num = 0.0, den = 0.0
            for f in 0..<t { num += (times[f] - mt) * (centroid[f] - mc); den += (times[f] - mt) * (times[f] - mt) }
            let k = max(1, t / 3)
            let first = centroid.prefix(k).reduce(0, +) / Double(k)
            let last = centroid.suffix(k).reduce(0, +) / Double(k)
            v += [Float(num / den), Float(first - last)]
        } else {
            v += [0, 0]
        }
        return v
    }

    /// Share of the envelope's modulation power (above 0.5 Hz) in 2–8 Hz, and its peak frequency.
    static func modulation(_ envelope: [Double], hopSec: Double) -> [Float] {
        let t = envelope.count
        guard t >= minModulationFrames else { return [-1, -1] }
        let table: DFTTable
        if t <= 64 {
            table = table64
        } else if t <= 256 {
            table = table256
        } else {
            var length = 512
            while length < t { length *= 2 }
            table = DFTTable(length: length)
        }
        let mean = envelope.reduce(0, +) / Double(t)
        // numpy.hanning: 0.5 − 0.5 cos(2πk / (T − 1)).
        let x = (0..<t).map { k in (envelope[k] - mean) * (0.5 - 0.5 * cos(2 * Double.pi * Double(k) / Double(t - 1))) }
        let length = table.length
        let binHz = 1 / (Double(length) * hopSec)
        var above = 1e-12, band = 0.0, peakPower = 0.0, peakHz = 0.0
        for k in 0...(length / 2) {
            let hz = Double(k) * binHz
            guard hz > 0.5 else { continue }
            var re = 0.0, im = 0.0
            var phase = 0
            for f in 0..<t {
                re += x[f] * table.cos[phase]; im -= x[f] * table.sin[phase]
                phase += k; if phase >= length { phase -= length }
            }
            let power = re * re + im * im
            above += power
            if hz >= 2 && hz <= 8 { band += power }
            if power > peakPower { peakPower = power; peakHz = hz }
        }
        return [Float(band / above), Float(peakHz)]
    }

    struct DFTTable: Sendable {
        let length: Int
        let cos: [Double]
        let sin: [Double]
        init(length: Int) {
            self.length = length
            cos = (0..<length).map { Foundation.cos(2 * Double.pi * Double($0) / Double(length)) }
            sin = (0..<length).map { Foundation.sin(2 * Double.pi * Double($0) / Double(length)) }
        }
    }
}
