import Foundation
import SleepCycleBus

/// The breathing envelope of one channel: band-limited log energy, decimated from 16 kHz to ~10 Hz.
///
/// Breath sounds are turbulent-airflow noise whose energy lies mostly between ~100 Hz and ~2 kHz
/// (Pasterkamp et al., "Respiratory sounds: advances beyond the stethoscope", Am J Respir Crit Care Med
/// 156:974–987, 1997); each inhalation/exhalation is a burst of that noise. The envelope is therefore the
/// energy in a pass band (2nd-order Butterworth high-pass then low-pass, RBJ cookbook sections), averaged
/// over consecutive, non-overlapping blocks of `hopLength` samples and expressed in dB:
///
///     e[k] = 10·log10( mean_{t in block k} y(t)² + 1e-10 )
///
/// Blocks are aligned to the session timeline (block k covers samples [k·hop, (k+1)·hop)), so the
/// envelope does not depend on how the audio was cut into `.audio` blocks. The log compresses loud
/// transients (a cough, a door) so that they do not dominate the periodicity analysis; its −100 dB floor
/// matches librosa's power-to-dB floor. This is the "sound energy envelope" of Nam, Reyes & Chon,
/// "Estimation of respiratory rates using the built-in microphone of a smartphone or headset",
/// IEEE J Biomed Health Inform 20(6):1493–1501, 2016, computed directly at a low rate (decimate early).
struct BreathingEnvelope: Sendable {
    /// Samples of analysis-rate audio per envelope sample (1600 = 100 ms at 16 kHz → 10 Hz).
    let hopLength: Int
    private var highPass: Biquad
    private var lowPass: Biquad
    /// Index of the envelope block being accumulated (block k covers [k·hop, (k+1)·hop)); nil before any audio.
    private var block: Int64?
    private var sum: Double = 0
    private var count = 0

    init(hopLength: Int, lowHz: Double, highHz: Double, sampleRate: Double) {
        precondition(hopLength > 0, "envelope hop must be positive")
        self.hopLength = hopLength
        highPass = Biquad(.highPass, cutoffHz: lowHz, sampleRate: sampleRate)
        lowPass = Biquad(.lowPass, cutoffHz: highHz, sampleRate: sampleRate)
    }

    /// Forgets the current block and the filter memory (after a gap in the audio).
    mutating func reset() {
        highPass.reset(); lowPass.reset()
        block = nil; sum = 0; count = 0
    }

    /// Filters `samples` (the first at stream time `start`) and appends every completed envelope block
    /// to `output` as `(blockIndex, dB)`. Blocks with fewer than half their samples (the first block after
    /// a start or gap that is not aligned) are dropped. Allocates nothing beyond `output`'s growth.
    mutating func process(_ samples: UnsafeBufferPointer<Float>, start: SampleTime,
                          into output: inout [(index: Int64, value: Float)]) {
        guard !samples.isEmpty else { return }
        let hop = Int64(hopLength)
        var t = start
        var i = 0
        let n = samples.count
        if block == nil || t >= (block! + 1) * hop || t < block! * hop {
            // First audio, or the timeline jumped: start accumulating the block containing t.
            if block != nil { flush(into: &output) }
            block = t >= 0 ? t / hop : (t - hop + 1) / hop
            sum = 0; count = 0
        }
        while i < n {
            let blockEnd = (block! + 1) * hop
            let take = Int(min(Int64(n - i), blockEnd - t))
            var acc = sum  // one running sum: identical rounding whatever the block sizes
            var hp = highPass, lp = lowPass
            for j in i..<(i + take) {
                let y = lp.process(hp.process(samples[j]))
                acc += Double(y * y)
            }
            highPass = hp; lowPass = lp
            sum = acc; count += take
            i += take; t += Int64(take)
            if t == blockEnd {
                flush(into: &output)
                block = block! + 1
            }
        }
    }

    private mutating func flush(into output: inout [(index: Int64, value: Float)]) {
        if let b = block, count * 2 >= hopLength {
            let meanSquare = sum / Double(count)
            output.append((b, Float(10 * log10(meanSquare + 1e-10))))
        }
        sum = 0; count = 0
    }
}
