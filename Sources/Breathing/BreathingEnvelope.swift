import Foundation
import SleepCycleBus

/// The breathing envelope of one channel: band-limited log energy, decimated from 16 kHz to ~10 Hz.
///
/// Breath sounds are turbulent-airflow noise whose energy lies mostly between ~100 Hz and ~2 kHz
/// (Pasterkamp et al., "Respiratory sounds: advances beyond the stethoscope", Am J Respir Crit Care Med
/// 156:974–987, 1997); each inhalation/exhalation is a burst of that noise. The envelope is the energy in
/// that band averaged over consecutive, non-overlapping blocks of `hopLength` samples, in dB:
///
///     e[k] = 10·log10( mean_{m in block k} y(m)² + 1e-10 )
///
/// To stay cheap (a few % of frame-feature extraction) the audio is first decimated by `decimation`
/// (mean of each group of 4 samples: 16 kHz → 4 kHz; this boxcar passes 2 kHz at −3.7 dB and folds
/// 2–8 kHz content into the band at −10 dB or less, which only adds more breath-noise energy), then
/// band-limited at 4 kHz by a 2nd-order Butterworth high-pass (`lowHz`) and low-pass (`highHz`)
/// (RBJ cookbook sections), so y(m) is the band signal at the decimated rate.
///
/// Blocks and decimation groups are aligned to the session timeline (block k covers samples
/// [k·hop, (k+1)·hop)) and every sum runs in time order, so the envelope is bit-identical however the
/// audio was cut into `.audio` blocks. The log compresses loud transients (a cough, a door) so that they
/// do not dominate the periodicity analysis; its −100 dB floor matches librosa's power-to-dB floor. This is
/// the "sound energy envelope" of Nam, Reyes & Chon, "Estimation of respiratory rates using the built-in
/// microphone of a smartphone or headset", IEEE J Biomed Health Inform 20(6):1493–1501, 2016, computed
/// directly at a low rate (decimate early).
/// One envelope value: block index, band energy (dB) and the block's spectral tone (dB, NaN when the envelope
/// source gives none; see `FeatureEnvelope`).
struct EnvelopeSample: Sendable, Equatable {
    var index: Int64
    var value: Float
    var tone: Float = .nan

    static func == (a: Self, b: Self) -> Bool {
        a.index == b.index && a.value == b.value && (a.tone == b.tone || (a.tone.isNaN && b.tone.isNaN))
    }
}

struct BreathingEnvelope: Sendable {
    /// Samples of analysis-rate audio per envelope sample (1600 = 100 ms at 16 kHz → 10 Hz).
    let hopLength: Int
    /// Input samples averaged into one sample before filtering.
    let decimation: Int
    private var highPass: Biquad
    private var lowPass: Biquad
    /// Index of the envelope block being accumulated (block k covers [k·hop, (k+1)·hop)); nil before any audio.
    private var block: Int64?
    /// Sum of y² over the block's decimated samples, their number, and the input samples seen.
    private var sum: Double = 0
    private var decimatedCount = 0
    private var count = 0
    /// The decimation group being summed.
    private var groupSum: Float = 0
    private var groupCount = 0

    init(hopLength: Int, lowHz: Double, highHz: Double, sampleRate: Double, decimation: Int = 4) {
        precondition(decimation > 0 && hopLength > 0 && hopLength % decimation == 0,
                     "envelope hop \(hopLength) must be a positive multiple of the decimation \(decimation)")
        self.hopLength = hopLength
        self.decimation = decimation
        let rate = sampleRate / Double(decimation)
        highPass = Biquad(.highPass, cutoffHz: lowHz, sampleRate: rate)
        lowPass = Biquad(.lowPass, cutoffHz: min(highHz, 0.45 * rate), sampleRate: rate)
    }

    /// Forgets the current block and the filter memory (after a gap in the audio).
    mutating func reset() {
        highPass.reset(); lowPass.reset()
        block = nil; sum = 0; decimatedCount = 0; count = 0; groupSum = 0; groupCount = 0
    }

    /// Filters `samples` (the first at stream time `start`) and appends every completed envelope block
    /// to `output` as `(blockIndex, dB)`. Blocks with fewer than half their samples (the first block after
    /// a start or gap that is not aligned) are dropped. Allocates nothing beyond `output`'s growth.
    mutating func process(_ samples: UnsafeBufferPointer<Float>, start: SampleTime,
                          into output: inout [EnvelopeSample]) {
        guard !samples.isEmpty else { return }
        let hop = Int64(hopLength), d = Int64(decimation)
        var t = start
        if block == nil || t >= (block! + 1) * hop || t < block! * hop {
            // First audio, or the timeline jumped: start accumulating the block containing t.
            if block != nil { flush(into: &output) }
            block = t >= 0 ? t / hop : (t - hop + 1) / hop
            sum = 0; decimatedCount = 0; count = 0; groupSum = 0; groupCount = 0
        }
        var i = 0
        let n = samples.count
        var hp = highPass, lp = lowPass
        var acc = sum, gs = groupSum, gc = groupCount, dc = decimatedCount
        let dn = decimation, scale = Float(decimation)
        while i < n {
            let blockEnd = (block! + 1) * hop
            // Fast path: whole, aligned groups up to the block end or the input end. Same arithmetic, in
            // the same order, as the general path below.
            let groups = gc == 0 ? min(n - i, Int(blockEnd - t)) / dn : 0
            if groups > 0 {
                for g in 0..<groups {
                    let base = i + g * dn
                    var s: Float = 0
                    for k in 0..<dn { s += samples[base + k] }
                    let y = lp.process(hp.process(s / scale))
                    acc += Double(y * y)
                }
                dc += groups
                count += groups * dn
                i += groups * dn; t += Int64(groups * dn)
                if t == blockEnd {
                    sum = acc; decimatedCount = dc
                    flush(into: &output)
                    acc = 0; dc = 0
                    block = block! + 1
                }
                continue
            }
            // Up to the next group boundary (a multiple of `decimation`), the block end or the input end.
            let phase = t >= 0 ? t % d : (d + t % d) % d
            let end = i + Int(min(Int64(n - i), d - phase))
            for j in i..<end { gs += samples[j] }
            gc += end - i
            count += end - i
            t += Int64(end - i); i = end
            let groupDone = t % d == 0
            if groupDone {
                let y = lp.process(hp.process(gs / Float(gc)))
                acc += Double(y * y); dc += 1
                gs = 0; gc = 0
            }
            if t == blockEnd {
                sum = acc; decimatedCount = dc
                flush(into: &output)
                acc = 0; dc = 0
                block = block! + 1
            }
        }
        highPass = hp; lowPass = lp
        sum = acc; groupSum = gs; groupCount = gc; decimatedCount = dc
    }

    private mutating func flush(into output: inout [EnvelopeSample]) {
        if let b = block, count * 2 >= hopLength, decimatedCount > 0 {
            let meanSquare = sum / Double(decimatedCount)
            output.append(EnvelopeSample(index: b, value: Float(10 * log10(meanSquare + 1e-10))))
        }
        sum = 0; decimatedCount = 0; count = 0
    }
}
