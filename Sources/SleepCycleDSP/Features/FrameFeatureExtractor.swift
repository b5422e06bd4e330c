#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Computes the `FeatureLayout.stride` features of one frame into caller-owned storage.
///
/// All buffers are allocated in `init`; `compute` allocates nothing. Definitions (librosa 0.11, `center=True`
/// framing done by the caller; `S` = |STFT| of the periodic-Hann-windowed frame, `P = S²`, `f_k = k·sr/n`):
/// * rms — `feature.rms`: `sqrt(mean(x²))` over the *unwindowed* frame (zero padding included).
/// * spectralCentroid — `feature.spectral_centroid`: `Σ f_k S_k / Σ S_k`; 0 when `Σ S_k` is 0.
/// * spectralBandwidth — `feature.spectral_bandwidth(p=2)`: `sqrt(Σ S_k (f_k − centroid)² / Σ S_k)`; 0 for silence.
/// * spectralRolloff — `feature.spectral_rolloff(roll_percent=0.85)`: the smallest `f_k` whose cumulative `S`
///   reaches 0.85·Σ S (so 0 for silence).
/// * spectralFlatness — `feature.spectral_flatness(amin=1e-10, power=2)`: geometric / arithmetic mean of
///   `max(P_k, 1e-10)` (1 for silence).
/// * spectralFlux — not in librosa: `sqrt(Σ max(0, S_k − S'_k)²)` against the previous frame's `S'` of the same
///   stream (Dixon 2006, "Onset detection revisited", DAFx, §2.2, with the L2 norm); 0 for a stream's first frame.
/// * zeroCrossingRate — `feature.zero_crossing_rate(center=True)`: crossings between consecutive samples of the
///   frame divided by the frame length, where a sample with `|x| ≤ 1e-10` counts as 0 and 0 as positive.
///   librosa pads the signal with its edge values (`mode='edge'`), which never cross; so only pairs of *real*
///   samples (`zcrRange`) count.
/// * bandEnergy — mean `P_k` over bins with `bandEdgesHz[b] ≤ f_k < bandEdgesHz[b+1]` (the last band includes
///   its upper edge); 0 for a band without bins.
/// * mel — `feature.melspectrogram(power=2, htk=False, norm='slaney', fmin=0, fmax=sr/2)`: `Σ_k W_mk P_k`.
/// * mfcc — `feature.mfcc` on `power_to_db(mel, ref=1, amin=1e-10, top_db=None)`: DCT-II (ortho) of
///   `10·log10(max(mel, 1e-10))`, first 13 coefficients.
final class FrameFeatureExtractor {
    let frameLength: Int
    let sampleRate: Int
    let binCount: Int
    private let plan: RealFFTPlan
    private let window: UnsafeMutablePointer<Float>
    private let fftIn: UnsafeMutablePointer<Float>
    private let fftOut: UnsafeMutablePointer<Float>
    private let power: UnsafeMutablePointer<Float>
    private var magnitude: UnsafeMutablePointer<Float>
    private var previousMagnitude: UnsafeMutablePointer<Float>
    private let freqs: UnsafeMutablePointer<Float>
    private var hasPrevious = false
    private let melLo: UnsafeMutablePointer<Int>
    private let melLength: UnsafeMutablePointer<Int>
    private let melOffset: UnsafeMutablePointer<Int>
    private let melWeights: UnsafeMutablePointer<Float>
    private let melDB: UnsafeMutablePointer<Float>
    private let dct: UnsafeMutablePointer<Float>
    private let bandLo: UnsafeMutablePointer<Int>
    private let bandHi: UnsafeMutablePointer<Int>

    init(frameLength: Int, sampleRate: Int) {
        self.frameLength = frameLength
        self.sampleRate = sampleRate
        let bins = frameLength / 2 + 1
        binCount = bins
        plan = RealFFTPlan.forward(size: frameLength)
        window = FFTBuffer.allocate(frameLength)
        for (i, w) in Window.periodicHann(frameLength).enumerated() { window[i] = w }
        fftIn = FFTBuffer.allocate(frameLength)
        fftOut = FFTBuffer.allocate(2 * bins + 16)
        power = FFTBuffer.allocate(bins)
        magnitude = FFTBuffer.allocate(bins)
        previousMagnitude = FFTBuffer.allocate(bins)
        freqs = FFTBuffer.allocate(bins)
        for k in 0..<bins { freqs[k] = Float(Double(k) * Double(sampleRate) / Double(frameLength)) }

        let bank = MelFilterBank(sampleRate: sampleRate, fftSize: frameLength, melCount: FeatureLayout.melCount)
        melLo = .allocate(capacity: bank.melCount)
        melLength = .allocate(capacity: bank.melCount)
        melOffset = .allocate(capacity: bank.melCount)
        for m in 0..<bank.melCount {
            melLo[m] = bank.lo[m]; melLength[m] = max(0, bank.hi[m] - bank.lo[m] + 1); melOffset[m] = bank.offset[m]
        }
        melWeights = FFTBuffer.allocate(bank.weights.count)
        for (i, w) in bank.weights.enumerated() { melWeights[i] = w }
        melDB = FFTBuffer.allocate(FeatureLayout.melCount)
        dct = FFTBuffer.allocate(FeatureLayout.mfccCount * FeatureLayout.melCount)
        for (i, c) in dctIIOrthoMatrix(rows: FeatureLayout.mfccCount, n: FeatureLayout.melCount).enumerated() {
            dct[i] = c
        }

        let edges = FeatureLayout.bandEdgesHz.map(Double.init)
        bandLo = .allocate(capacity: FeatureLayout.bandCount)
        bandHi = .allocate(capacity: FeatureLayout.bandCount)
        for b in 0..<FeatureLayout.bandCount {
            let isLast = b == FeatureLayout.bandCount - 1
            let inBand = (0..<bins).filter { k in
                let f = Double(k) * Double(sampleRate) / Double(frameLength)
                return f >= edges[b] && (f < edges[b + 1] || (isLast && f <= edges[b + 1]))
            }
            bandLo[b] = inBand.first ?? 0
            bandHi[b] = (inBand.last ?? -1) + 1
        }
    }

    deinit {
        for p in [window, fftIn, fftOut, power, magnitude, previousMagnitude, freqs, melWeights, melDB, dct] {
            FFTBuffer.deallocate(p)
        }
        melLo.deallocate(); melLength.deallocate(); melOffset.deallocate(); bandLo.deallocate(); bandHi.deallocate()
    }

    /// Forgets the previous frame (the next frame's spectral flux is 0).
    func resetFlux() { hasPrevious = false }

    /// Features of the `frameLength` samples at `x` into `out[0..<FeatureLayout.stride]`.
    /// `zcrRange` is the part of the frame holding real samples (the rest is padding).
    func compute(frame x: UnsafePointer<Float>, zcrRange: Range<Int>, into out: UnsafeMutablePointer<Float>) {
        let n = frameLength, bins = binCount
        // Index arithmetic wraps (`&+`, `&*`, as in SIMDKernels.swift): indices stay below 2·binCount, so they
        // cannot overflow, and a checked `+` would add three instructions to every step of every loop.

        // RMS of the unwindowed frame; windowed copy into the FFT input.
        var energyAcc = SIMD8<Float>(repeating: 0)
        var i = 0
        while i &+ 8 <= n {
            let v = load8(x, i)
            energyAcc += v * v
            store8(v * load8(window, i), fftIn, i)
            i &+= 8
        }
        var energy = energyAcc.sum()
        while i < n { energy += x[i] * x[i]; fftIn[i] = x[i] * window[i]; i &+= 1 }
        out[FeatureLayout.rms] = (energy / Float(n)).squareRoot()

        plan.execute(fftIn, fftOut)

        // Power, magnitude, centroid sums.
        var sumMAcc = SIMD8<Float>(repeating: 0), sumFMAcc = SIMD8<Float>(repeating: 0)
        var k = 0
        while k &+ 8 <= bins {
            let c = UnsafeRawPointer(fftOut + 2 &* k).loadUnaligned(as: SIMD16<Float>.self)
            let sq = c * c
            let p = sq.evenHalf + sq.oddHalf
            let m = p.squareRoot()
            store8(p, power, k); store8(m, magnitude, k)
            sumMAcc += m; sumFMAcc += m * load8(freqs, k)
            k &+= 8
        }
        var sumM = sumMAcc.sum(), sumFM = sumFMAcc.sum()
        while k < bins {
            let re = fftOut[2 &* k], im = fftOut[2 &* k &+ 1]
            let p = re * re + im * im, m = p.squareRoot()
            power[k] = p; magnitude[k] = m; sumM += m; sumFM += m * freqs[k]
            k &+= 1
        }
        let silent = !(sumM > 0)
        let centroid: Float = silent ? 0 : sumFM / sumM
        out[FeatureLayout.spectralCentroid] = centroid

        // Bandwidth (p = 2) and flux.
        var devAcc = SIMD8<Float>(repeating: 0), fluxAcc = SIMD8<Float>(repeating: 0)
        let c8 = SIMD8<Float>(repeating: centroid), zero8 = SIMD8<Float>(repeating: 0)
        k = 0
        while k &+ 8 <= bins {
            let m = load8(magnitude, k)
            let d = load8(freqs, k) - c8
            devAcc += m * d * d
            let rise = vmax(m - load8(previousMagnitude, k), zero8)
            fluxAcc += rise * rise
            k &+= 8
        }
        var dev = devAcc.sum(), flux = fluxAcc.sum()
        while k < bins {
            let m = magnitude[k], d = freqs[k] - centroid
            dev += m * d * d
            let rise = max(m - previousMagnitude[k], 0)
            flux += rise * rise
            k &+= 1
        }
        out[FeatureLayout.spectralBandwidth] = silent ? 0 : (dev / sumM).squareRoot()
        out[FeatureLayout.spectralFlux] = hasPrevious ? flux.squareRoot() : 0
        swap(&magnitude, &previousMagnitude)
        hasPrevious = true
        let mag = previousMagnitude  // this frame's magnitudes

        // Roll-off: first bin where the running sum of S reaches 85 % of the total (chunked scan).
        let threshold = Float(0.85) * sumM
        var cumulative: Float = 0
        var rolloffBin = bins - 1
        k = 0
        scan: while k < bins {
            let end = min(k &+ 8, bins)
            let chunk = end &- k == 8 ? load8(mag, k).sum() : vsum(mag + k, end &- k)
            if cumulative + chunk >= threshold {
                for j in k..<end {
                    cumulative += mag[j]
                    if cumulative >= threshold { rolloffBin = j; break scan }
                }
            } else {
                cumulative += chunk
            }
            k = end
        }
        out[FeatureLayout.spectralRolloff] = freqs[rolloffBin]

        // Flatness: exp(mean ln P') / mean P', P' = max(P, 1e-10). The log-sum is taken as a product of
        // mantissas (renormalised every 16 steps) plus a sum of binary exponents: 9 log2 calls per frame.
        let amin = SIMD8<Float>(repeating: 1e-10)
        var mantissa = SIMD8<Float>(repeating: 1), exponent = SIMD8<Int32>(repeating: 0)
        var sumPAcc = SIMD8<Float>(repeating: 0)
        let mantMask = SIMD8<UInt32>(repeating: 0x007F_FFFF), one = SIMD8<UInt32>(repeating: 0x3F80_0000)
        k = 0
        var steps = 0
        while k &+ 8 <= bins {
            let p = vmax(load8(power, k), amin)
            sumPAcc += p
            let bits = unsafeBitCast(p, to: SIMD8<UInt32>.self)
            exponent &+= SIMD8<Int32>(truncatingIfNeeded: bits &>> 23) &- 127
            mantissa *= unsafeBitCast((bits & mantMask) | one, to: SIMD8<Float>.self)
            steps &+= 1
            if steps == 16 {
                let mb = unsafeBitCast(mantissa, to: SIMD8<UInt32>.self)
                exponent &+= SIMD8<Int32>(truncatingIfNeeded: mb &>> 23) &- 127
                mantissa = unsafeBitCast((mb & mantMask) | one, to: SIMD8<Float>.self)
                steps = 0
            }
            k &+= 8
        }
        var sumP = sumPAcc.sum()
        var log2Sum = Double(exponent.wrappedSum())
        for lane in 0..<8 { log2Sum += Double(log2(mantissa[lane])) }
        while k < bins {
            let p = max(power[k], 1e-10)
            sumP += p; log2Sum += Double(log2(p))
            k &+= 1
        }
        let geometricMean = exp2(log2Sum / Double(bins))
        out[FeatureLayout.spectralFlatness] = Float(geometricMean / (Double(sumP) / Double(bins)))

        // Zero-crossing rate over the real samples of the frame.
        out[FeatureLayout.zeroCrossingRate] = Float(Self.zeroCrossings(x, zcrRange)) / Float(n)

        // Band energies (mean power per bin).
        for b in 0..<FeatureLayout.bandCount {
            let lo = bandLo[b], count = bandHi[b] &- lo
            out[FeatureLayout.bandEnergy + b] = count > 0 ? vsum(power + lo, count) / Float(count) : 0
        }

        // Mel bands, their dB values, MFCCs.
        for m in 0..<FeatureLayout.melCount {
            let s = vdot(melWeights + melOffset[m], power + melLo[m], melLength[m])
            out[FeatureLayout.mel + m] = s
            melDB[m] = 10 * log10(max(s, 1e-10))
        }
        for c in 0..<FeatureLayout.mfccCount {
            out[FeatureLayout.mfcc + c] = vdot(dct + c &* FeatureLayout.melCount, melDB, FeatureLayout.melCount)
        }
    }

    /// Number of `i` in `range.lowerBound+1 ..< range.upperBound` where `x[i−1]` and `x[i]` differ in sign
    /// (librosa `zero_crossings(threshold=1e-10, zero_pos=True)`). `range` lies within the frame.
    @inline(__always)
    static func zeroCrossings(_ x: UnsafePointer<Float>, _ range: Range<Int>) -> Int {
        let thr: Float = -1e-10
        let thr8 = SIMD8<Float>(repeating: thr)
        var counts = SIMD8<Int32>(repeating: 0)
        var i = range.lowerBound &+ 1
        while i &+ 8 <= range.upperBound {
            let a = load8(x, i &- 1) .< thr8, b = load8(x, i) .< thr8
            counts &+= SIMD8<Int32>(repeating: 0).replacing(with: 1, where: a .^ b)
            i &+= 8
        }
        var total = Int(counts.wrappedSum())
        while i < range.upperBound {
            if (x[i &- 1] < thr) != (x[i] < thr) { total &+= 1 }
            i &+= 1
        }
        return total
    }
}
