import Foundation
import SleepCycleDSP

/// The breathing envelope from the engine's feature frames: the same 10-Hz log band energy as
/// `BreathingEnvelope`, read from `FeatureBlock` band energies instead of filtering the audio again.
///
/// Each frame's power in 300–2000 Hz is Σ_b E_b·n_b over the `FeatureLayout.bandEdgesHz` bands 300–600,
/// 600–1000 and 1000–2000 Hz (E_b = mean power per FFT bin, n_b = bins in the band for the block's
/// frame length), divided by Σ n_b (mean power per bin over the band). Frames are grouped by their centre
/// sample into the 100-ms blocks of the session timeline (block k holds centres in [k·hop, (k+1)·hop)),
/// and the block value is 10·log10(mean + 1e-10). Costs a few additions per frame.
///
/// Each block also gets a **tone**: 10·log10 of the mean power per bin in 1000–4000 Hz over that in 300–1000 Hz
/// (bands 300–600, 600–1000 against 1000–2000, 2000–4000; white noise gives 0 dB). Inhale and exhale differ in
/// spectrum (on the deep-breathing recordings of Coswara the spectral centroid of alternate bursts differs by
/// 300–900 Hz; which one is brighter varies), so when they are heard as two bursts of equal level the tone
/// still alternates from burst to burst; `BreathingRateAnalyzer` uses that to count the two bursts as one breath.
/// Band-energy definition: FrameFeatureExtractor (SleepCycleDSP), after librosa's power spectrogram.
struct FeatureEnvelope: Sendable {
    let hopLength: Int
    /// Feature bands summed (indices into the band-energy columns): 300–2000 Hz for the envelope;
    /// 300–1000 against 1000–4000 Hz for the tone.
    private let bands = 2...4
    private let toneBands = 2...5
    private var block: Int64?
    private var sum: Double = 0
    private var lowSum: Double = 0
    private var highSum: Double = 0
    private var count = 0
    /// Bins per band of `toneBands` for `cachedFrameLength` (computed once per frame length).
    private var cachedFrameLength = 0
    private var weights: (Double, Double, Double, Double) = (0, 0, 0, 0)
    private var totalBins = 0.0
    private var lowBins = 0.0
    private var highBins = 0.0

    init(hopLength: Int) {
        precondition(hopLength > 0, "envelope hop must be positive")
        self.hopLength = hopLength
    }

    mutating func reset() { block = nil; sum = 0; lowSum = 0; highSum = 0; count = 0 }

    /// Bins of an FFT of `frameLength` samples at 16 kHz in each band of `toneBands`.
    private func binCounts(frameLength: Int) -> [Int] {
        let binHz = Double(16_000) / Double(frameLength)
        return toneBands.map { b in
            let lo = Double(FeatureLayout.bandEdgesHz[b]), hi = Double(FeatureLayout.bandEdgesHz[b + 1])
            return (0...(frameLength / 2)).filter { Double($0) * binHz >= lo && Double($0) * binHz < hi }.count
        }
    }

    /// Adds the frames of `features`; appends every completed block to `output`.
    mutating func process(_ features: FeatureBlock, into output: inout [EnvelopeSample]) {
        guard features.count > 0 else { return }
        if features.frameLength != cachedFrameLength {
            let counts = binCounts(frameLength: features.frameLength)
            weights = (Double(counts[0]), Double(counts[1]), Double(counts[2]), Double(counts[3]))
            totalBins = Double(counts[0] + counts[1] + counts[2])
            lowBins = Double(counts[0] + counts[1]); highBins = Double(counts[2] + counts[3])
            cachedFrameLength = features.frameLength
        }
        let total = totalBins
        guard total > 0 else { return }
        let e = FeatureLayout.bandEnergy
        let hop = Int64(hopLength)
        for i in 0..<features.count {
            let centre = features.start + Int64(i * features.hopLength)
            let k = centre >= 0 ? centre / hop : (centre - hop + 1) / hop
            if block != k {
                flush(into: &output)
                block = k
            }
            let low = Double(features[frame: i, e + bands.lowerBound]) * weights.0
                + Double(features[frame: i, e + bands.lowerBound + 1]) * weights.1
            let mid = Double(features[frame: i, e + bands.lowerBound + 2]) * weights.2
            sum += (low + mid) / total
            lowSum += low
            highSum += mid + Double(features[frame: i, e + bands.lowerBound + 3]) * weights.3
            count += 1
        }
    }

    /// Emits the block being accumulated (if it holds at least two frames) and starts afresh.
    mutating func flush(into output: inout [EnvelopeSample]) {
        if let b = block, count >= 2 {
            let tone = 10 * log10((highSum / (highBins * Double(count)) + 1e-10) / (lowSum / (lowBins * Double(count)) + 1e-10))
            output.append(EnvelopeSample(index: b, value: Float(10 * log10(sum / Double(count) + 1e-10)), tone: Float(tone)))
        }
        block = nil; sum = 0; lowSum = 0; highSum = 0; count = 0
    }
}
