import Foundation
import SleepCycleDSP

/// The level-invariant feature vector of one candidate segment: what a `SegmentClassifier` sees.
///
/// Every value is computed when `SegmentExtractor` closes a segment, from its noise-subtracted mel spectra: 61
/// summaries over the segment (`SegmentFeatureExtractor.spectralSummaries`), six of the raw audio's periodicity
/// (`SegmentVoicing`), then 39 of how the
/// spectra change in time (`SegmentShape`) — see `names` for the order. The same Swift code computes the training vectors
/// (`sleepcycle detect-dev segment-features`), so training and inference cannot drift apart.
public struct SegmentFeatures: Sendable, Hashable {
    public var values: [Float]
    /// Segment length in seconds (also encoded in `values` as log10).
    public var durationSec: Double

    public init(values: [Float], durationSec: Double) {
        precondition(values.count == Self.count, "SegmentFeatures needs \(Self.count) values")
        self.values = values
        self.durationSec = durationSec
    }

    /// Names in vector order (written into the model file and checked when it is loaded).
    public static let names: [String] = {
        var n: [String] = []
        for k in 1...12 { n.append("mfcc\(k)_mean") }
        for k in 1...12 { n.append("mfcc\(k)_std") }
        for k in 1...12 { n.append("mfcc\(k)_delta") }
        n += ["log10_duration_s", "snr_mean_db", "snr_max_db",
              "centroid_mean_khz", "centroid_std_khz", "spread_mean_khz", "flatness_mean", "rolloff85_mean_khz",
              "tilt_db_per_band",
              "frac_0_300", "frac_300_1000", "frac_1000_2000", "frac_2000_4000", "frac_4000_8000",
              "envelope_std_db", "envelope_mean_abs_delta_db", "envelope_peaks_per_s", "peak_position",
              "onset_rise_db", "frac_frames_within_6db", "low_high_corr",
              "low_band_peakiness_db", "zcr_mean", "zcr_std", "raw_flatness_mean"]
        n += SegmentVoicing.names    // from the raw audio (Voicing.swift)
        n += SegmentShape.names      // the order in time (SegmentShape.swift)
        return n
    }()
    public static var count: Int { names.count }
}

/// Computes `SegmentFeatures` and the raw snore-signature vector from a segment's frames.
///
/// Definitions (all per frame, then summarised over the segment):
/// * Noise-subtracted mel power `S_b = max(P_b − N_b, 0) + ε`, `P` = the frame's 40 Slaney mel powers
///   (FeatureLayout.mel), `N` = `MelNoiseFloor`, `ε = 10⁻³ × mean_b max(P_b − N_b, 0) + 10⁻¹²` (power spectral
///   subtraction, Boll 1979, IEEE TASSP 27(2), with a floor relative to the frame's own signal so neither the
///   recording level nor the background colour enters the features).
/// * `L_b = 10 log10 S_b`; cepstrum `c_k` = DCT-II (orthonormal) of `L` for k = 1…12 (c₀, the level, is left out):
///   the MFCC definition of librosa/Davis & Mermelstein 1980 applied to the denoised mel spectrum.
/// * Centroid / spread / 85 % roll-off / flatness over the mel-band centre frequencies weighted by `S`
///   (the spectral-shape definitions of librosa and Peeters 2004, on mel bands instead of FFT bins).
/// * Tilt: least-squares slope of `L_b` against band index (dB per mel band).
/// * Band fractions: share of Σ S in five frequency ranges over the whole segment.
/// * Envelope `E_t = 10 log10 Σ_b S_b`: its standard deviation, mean |ΔE|, number of local maxima with ≥ 3 dB
///   prominence per second (syllable-like modulation), relative position of the maximum, the rise in the first
///   three frames, and the share of frames within 6 dB of the maximum.
/// * `low_high_corr`: correlation over time of the < 1 kHz and ≥ 1 kHz denoised energies (dB).
/// * `low_band_peakiness_db`: mean over frames and bands b = 1…14 (the linear part of the mel scale, < 1 kHz, where
///   the 66-Hz-wide bands partly resolve the harmonics of a voice or a snore) of |L_b − (L_{b−1} + L_{b+1}) / 2|:
///   a cheap harmonicity cue without a pitch tracker.
/// * `zcr_mean`, `zcr_std`, `raw_flatness_mean`: the frames' own zero-crossing rate and spectral flatness
///   (FeatureLayout columns, librosa definitions; level-invariant but not noise-subtracted).
struct SegmentFeatureExtractor: Sendable {
    static let bands = FeatureLayout.melCount
    /// Decibels per neper of power, `10 / ln 10`: `ln S = L / dbPerNeper`.
    static let dbPerNeper = 10 / log(10.0)
    /// How many values `spectralSummaries` gives (they lead `SegmentFeatures`).
    static let spectralCount = 61
    let centresKHz: [Float]      // mel band centres (Slaney scale)
    let groupRanges: [Range<Int>]   // the bands of each fraction group (ascending, tiling 0..<bands)
    let lowBandEnd: Int          // first band with centre ≥ 1 kHz
    let dctByBand: [SIMD16<Float>]   // per band b: lane k-1 = DCT-II ortho basis k at b (k = 1…12), lanes 12…15 zero
    let tiltWeights: [Double]    // per band b: b − (bands − 1) / 2

    init(sampleRate: Double = 16000) {
        let n = Self.bands
        var d = [Float](repeating: 0, count: 12 * n)
        let scale = Float(sqrt(2.0 / Double(n)))
        for k in 1...12 {
            for b in 0..<n {
                d[(k - 1) * n + b] = scale * Float(cos(Double.pi * Double(k) * (2 * Double(b) + 1) / (2 * Double(n))))
            }
        }
        dctByBand = (0..<n).map { b in
            var lanes = SIMD16<Float>(repeating: 0)
            for k in 0..<12 { lanes[k] = d[k * n + b] }
            return lanes
        }
        tiltWeights = (0..<n).map { Double($0) - Double(n - 1) / 2 }
        // Slaney mel scale (librosa `mel_frequencies(htk=False)`): linear below 1 kHz, logarithmic above.
        func hzToMel(_ f: Double) -> Double {
            f < 1000 ? f / (200.0 / 3.0) : 15 + log(f / 1000) / (log(6.4) / 27)
        }
        func melToHz(_ m: Double) -> Double {
            m < 15 ? m * 200.0 / 3.0 : 1000 * exp((m - 15) * log(6.4) / 27)
        }
        let top = hzToMel(sampleRate / 2)
        let points = (0..<(n + 2)).map { melToHz(top * Double($0) / Double(n + 1)) }
        centresKHz = (1...n).map { Float(points[$0] / 1000) }
        let edges: [Float] = [0.3, 1.0, 2.0, 4.0]
        let groupOf = centresKHz.map { c in edges.firstIndex(where: { c < $0 }) ?? 4 }   // band → group 0..4
        groupRanges = (0..<5).map { g in
            (groupOf.firstIndex(where: { $0 >= g }) ?? n)..<(groupOf.firstIndex(where: { $0 > g }) ?? n)
        }
        precondition(zip(groupOf, groupOf.dropFirst()).allSatisfy(<=), "mel band centres must ascend")
        lowBandEnd = centresKHz.firstIndex(where: { $0 >= 1.0 }) ?? n
    }

    /// The 61 spectral summaries that lead `SegmentFeatures` (all but the voicing and shape values, which
    /// `SegmentExtractor` appends unless its `SegmentScreen` decides the segment from these), the raw snore
    /// signature, and the duration. `spectra` holds `frames × 40` noise-subtracted mel powers, `snrDb` the frame SNRs.
    ///
    /// `levelsDb` receives every frame's `L_b = 10 log10 S_b` (`frames × 40`, the values the cepstrum is taken of),
    /// for `SegmentShape` and the developer tools: each logarithm is taken once per segment.
    func spectralSummaries(spectra: [Float], snrDb: [Float], zcr: [Float], rawFlatness: [Float], frames: Int,
                           hopSec: Double, levelsDb: inout [Float]) -> (values: [Float], signature: [Float], durationSec: Double) {
        let n = Self.bands
        var cepSum = [Double](repeating: 0, count: 12)
        var cepSq = [Double](repeating: 0, count: 12)
        var cepDelta = [Double](repeating: 0, count: 12)
        var prevCep = [Float](repeating: 0, count: 12)
        var centroidSum = 0.0, centroidSq = 0.0, spreadSum = 0.0, flatSum = 0.0, rollSum = 0.0, tiltSum = 0.0
        var groupEnergy = [Double](repeating: 0, count: 5)
        var envelope = [Float](repeating: 0, count: frames)
        var peakiness = 0.0
        var lowDb = [Float](repeating: 0, count: frames)
        var highDb = [Float](repeating: 0, count: frames)
        // Band-index statistics for the tilt regression.
        let meanIdx = Double(n - 1) / 2
        var idxVar = 0.0
        for b in 0..<n { idxVar += (Double(b) - meanIdx) * (Double(b) - meanIdx) }

        // One pass over the bands per frame feeds every band sum (each accumulator still adds its terms in
        // ascending band order, so every value is the same as with one loop per quantity); the cepstrum's 12 dot
        // products run side by side (`dctByBand`, one lane per coefficient: the same products and sums per lane).
        // The 85 % roll-off reuses the running `total` (the same partial sums a second loop would form).
        var prefix = [Double](repeating: 0, count: n)
        if levelsDb.count < frames * n { levelsDb = [Float](repeating: 0, count: frames * n) }
        let lowEnd = lowBandEnd
        spectra.withUnsafeBufferPointer { spectra in
        centresKHz.withUnsafeBufferPointer { centresKHz in
        groupRanges.withUnsafeBufferPointer { groupRanges in
        dctByBand.withUnsafeBufferPointer { dctByBand in
        tiltWeights.withUnsafeBufferPointer { tiltWeights in
        levelsDb.withUnsafeMutableBufferPointer { levels in
        prefix.withUnsafeMutableBufferPointer { prefix in
        groupEnergy.withUnsafeMutableBufferPointer { groupEnergy in
            for t in 0..<frames {
                let base = t * n
                var total = 0.0, weighted = 0.0, levelSum = 0.0, low = 0.0, high = 0.0, tilt = 0.0
                var acc = SIMD16<Float>(repeating: 0)
                // The logarithms first (library calls: no accumulator has to live across them).
                let logS = UnsafeMutableBufferPointer(rebasing: levels[base..<(base + n)])
                for b in 0..<n { logS[b] = 10 * log10f(spectra[base + b]) }
                // Band by band within each fraction group (the groups tile the bands in ascending order), so the
                // group's running energy stays in a register.
                for g in 0..<groupRanges.count {
                    var energy = groupEnergy[g]
                    for b in groupRanges[g] {
                        let x = spectra[base + b]
                        let s = Double(x)
                        total += s
                        prefix[b] = total
                        weighted += s * Double(centresKHz[b])
                        let l = logS[b]
                        levelSum += Double(l)
                        energy += s
                        if b < lowEnd { low += s } else { high += s }
                        tilt += tiltWeights[b] * Double(l)
                        acc = acc + dctByBand[b] * SIMD16<Float>(repeating: l)
                    }
                    groupEnergy[g] = energy
                }
                let centroid = weighted / total
                var spreadAcc = 0.0
                for b in 0..<n {
                    let d = Double(centresKHz[b]) - centroid
                    spreadAcc += Double(spectra[base + b]) * d * d
                }
                var roll = Double(centresKHz[n - 1])
                let target = 0.85 * total
                for b in 0..<n where prefix[b] >= target { roll = Double(centresKHz[b]); break }
                var peak = 0.0
                for b in 1...14 { peak += Double(abs(logS[b] - 0.5 * (logS[b - 1] + logS[b + 1]))) }
                peakiness += peak / 14
                centroidSum += centroid; centroidSq += centroid * centroid
                spreadSum += (spreadAcc / total).squareRoot()
                // Geometric over arithmetic mean: exp(mean ln S), with ln S = L / (10 / ln 10).
                flatSum += exp(levelSum / Double(n) / Self.dbPerNeper) / (total / Double(n))
                rollSum += roll
                tiltSum += tilt / idxVar
                envelope[t] = Float(10 * log10(total))
                lowDb[t] = Float(10 * log10(low))
                highDb[t] = Float(10 * log10(high))
                for k in 0..<12 {
                    let c = acc[k]
                    cepSum[k] += Double(c); cepSq[k] += Double(c) * Double(c)
                    if t > 0 { cepDelta[k] += Double(abs(c - prevCep[k])) }
                    prevCep[k] = c
                }
            }
        }
        }
        }
        }
        }
        }
        }
        }
        let f = Double(frames)
        var v: [Float] = []
        v.reserveCapacity(SegmentFeatures.count)   // the caller appends the voicing and shape values
        for k in 0..<12 { v.append(Float(cepSum[k] / f)) }
        for k in 0..<12 { v.append(Float(max(0, cepSq[k] / f - (cepSum[k] / f) * (cepSum[k] / f)).squareRoot())) }
        for k in 0..<12 { v.append(frames > 1 ? Float(cepDelta[k] / (f - 1)) : 0) }
        let duration = f * hopSec
        v.append(Float(log10(duration)))
        v.append(snrDb.prefix(frames).reduce(0, +) / Float(frames))
        v.append(snrDb.prefix(frames).max() ?? 0)
        let cMean = centroidSum / f
        v.append(Float(cMean))
        v.append(Float(max(0, centroidSq / f - cMean * cMean).squareRoot()))
        v.append(Float(spreadSum / f))
        v.append(Float(flatSum / f))
        v.append(Float(rollSum / f))
        v.append(Float(tiltSum / f))
        let gTotal = groupEnergy.reduce(0, +)
        for g in 0..<5 { v.append(Float(groupEnergy[g] / gTotal)) }
        v += Self.envelopeShape(envelope, hopSec: hopSec)
        v.append(Self.correlation(lowDb, highDb))
        v.append(Float(peakiness / f))
        let zm = zcr.prefix(frames).reduce(0, +) / Float(frames)
        v.append(zm)
        v.append((zcr.prefix(frames).reduce(0) { $0 + ($1 - zm) * ($1 - zm) } / Float(frames)).squareRoot())
        v.append(rawFlatness.prefix(frames).reduce(0, +) / Float(frames))
        assert(v.count == Self.spectralCount)

        // Raw 16-d snore signature (z-scored and L2-normalised by `SnoreSignature`): mean cepstral shape c1…c12,
        // centroid, spread, flatness, tilt.
        var signature = Array(v[0..<12])
        signature += [Float(cMean), Float(spreadSum / f), Float(flatSum / f), Float(tiltSum / f)]
        return (v, signature, duration)
    }

    static func envelopeShape(_ e: [Float], hopSec: Double) -> [Float] {
        let n = e.count
        let mean = e.reduce(0, +) / Float(n)
        var varAcc: Float = 0
        for x in e { varAcc += (x - mean) * (x - mean) }
        var absDelta: Float = 0
        for t in 1..<max(n, 1) { absDelta += abs(e[t] - e[t - 1]) }
        // Local maxima with at least 3 dB prominence on both sides (within the segment).
        var peaks = 0
        var t = 0
        var lastMin = e.first ?? 0
        var candidate: Float? = nil
        while t < n {
            let x = e[t]
            if let c = candidate {
                if x > c { candidate = x } else if c - x >= 3 { peaks += 1; candidate = nil; lastMin = x }
            } else {
                if x < lastMin { lastMin = x } else if x - lastMin >= 3 { candidate = x }
            }
            t += 1
        }
        if candidate != nil { peaks += 1 }
        let peakIndex = e.indices.max(by: { e[$0] < e[$1] }) ?? 0
        let peak = e[peakIndex]
        let rise = (e[min(2, n - 1)] - e[0])
        let within = e.filter { $0 >= peak - 6 }.count
        return [
            (varAcc / Float(n)).squareRoot(),
            n > 1 ? absDelta / Float(n - 1) : 0,
            Float(Double(max(peaks, 1)) / (Double(n) * hopSec)),
            n > 1 ? Float(peakIndex) / Float(n - 1) : 0,
            rise,
            Float(within) / Float(n),
        ]
    }

    static func correlation(_ a: [Float], _ b: [Float]) -> Float {
        let n = Float(a.count)
        guard a.count > 2 else { return 0 }
        let ma = a.reduce(0, +) / n, mb = b.reduce(0, +) / n
        var sab: Float = 0, saa: Float = 0, sbb: Float = 0
        for i in 0..<a.count {
            sab += (a[i] - ma) * (b[i] - mb); saa += (a[i] - ma) * (a[i] - ma); sbb += (b[i] - mb) * (b[i] - mb)
        }
        let d = (saa * sbb).squareRoot()
        return d > 1e-6 ? sab / d : 0
    }
}
