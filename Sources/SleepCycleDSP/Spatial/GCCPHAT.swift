#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The time difference of arrival between two microphones by the generalised cross-correlation with the phase
/// transform, GCC-PHAT (Knapp & Carter, "The generalized correlation method for estimation of time delay", IEEE
/// Trans. ASSP 24(4), 1976).
///
/// Each frame pair is Hann-windowed and zero-padded to twice its length (so the correlation is linear, not
/// circular, at every lag below the frame length); its cross-power spectrum `conj(L)·R` is divided by its magnitude
/// (the phase transform: every frequency votes with the same weight, which sharpens the direct path's peak against
/// reverberation) and added to an accumulator. Summing the whitened spectra of several frames before the inverse
/// transform is the steered-response-power form (SRP-PHAT, DiBiase et al. 2001): the frames of one sound vote
/// together for one delay.
///
/// Lag convention: a positive lag τ means the right channel is the left one delayed by τ samples — the sound
/// reached the left microphone first. Not thread-safe (one instance per user); the FFT plans are shared.
public final class GCCPHAT {
    /// Samples per frame (the window length).
    public let frameLength: Int
    /// Transform length: twice the frame length.
    public let fftSize: Int
    /// Lags reported: −maxLag…maxLag.
    public let maxLag: Int
    private let forward: RealFFTPlan
    private let inverse: RealInverseFFTPlan
    private let window: [Float]
    private let inL: UnsafeMutablePointer<Float>
    private let inR: UnsafeMutablePointer<Float>
    private let specL: UnsafeMutablePointer<Float>
    private let specR: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    private let time: UnsafeMutablePointer<Float>
    /// The accumulated whitened cross-power spectrum (re, im per bin).
    private let accumulated: UnsafeMutablePointer<Float>
    /// The background's power spectrum per channel (sums over `noiseFrames` frames), for the SNR weighting.
    private let noiseL: UnsafeMutablePointer<Float>
    private let noiseR: UnsafeMutablePointer<Float>
    /// Frames of background accumulated (0: plain PHAT).
    public private(set) var noiseFrames = 0
    /// Sum of the weights accumulated so far.
    public private(set) var totalWeight: Float = 0

    /// - Parameters:
    ///   - frameLength: samples per frame (e.g. 1024 at 16 kHz, 64 ms).
    ///   - maxLag: the largest delay of interest in samples (the microphone distance over the speed of sound, times
    ///     the rate); at most `frameLength − 1`.
    public init(frameLength: Int, maxLag: Int) throws {
        guard frameLength >= 16 else { throw DSPError(.invalidParameter, "GCC-PHAT frame length \(frameLength) is below 16") }
        guard maxLag >= 1, maxLag < frameLength else {
            throw DSPError(.invalidParameter, "GCC-PHAT maximum lag \(maxLag) must be 1…\(frameLength - 1)")
        }
        self.frameLength = frameLength
        self.maxLag = maxLag
        fftSize = 2 * frameLength
        forward = RealFFTPlan.forward(size: fftSize)
        inverse = RealInverseFFTPlan.inverse(size: fftSize)
        window = Window.periodicHann(frameLength)
        let bins = 2 * (fftSize / 2 + 1)
        inL = FFTBuffer.allocate(fftSize); inR = FFTBuffer.allocate(fftSize)
        specL = FFTBuffer.allocate(bins); specR = FFTBuffer.allocate(bins)
        scratch = FFTBuffer.allocate(bins); time = FFTBuffer.allocate(fftSize)
        accumulated = FFTBuffer.allocate(bins)
        noiseL = FFTBuffer.allocate(bins / 2); noiseR = FFTBuffer.allocate(bins / 2)
    }

    deinit {
        for p in [inL, inR, specL, specR, scratch, time, accumulated, noiseL, noiseR] { FFTBuffer.deallocate(p) }
    }

    /// Adds one frame pair of background (the room without the sound whose delay is wanted): from then on each
    /// frequency of a frame accumulated votes in proportion to its signal-to-noise ratio on both channels,
    /// `(1 − 3N/|X|²)⁺` each, on top of the phase transform. Plain PHAT gives a bin where the background dominates
    /// (another sleeper's breathing, a fan in a corner) the same vote as the sound's own bins, and so the
    /// background's delay (the SNR-weighted GCC of e.g. Valin et al., "Robust localization and tracking of
    /// simultaneous moving sound sources using beamforming and particle filtering", 2007).
    public func accumulateNoise(left: UnsafePointer<Float>, right: UnsafePointer<Float>) {
        transform(left: left, right: right)
        for k in 0..<(fftSize / 2 + 1) {
            noiseL[k] += specL[2 * k] * specL[2 * k] + specL[2 * k + 1] * specL[2 * k + 1]
            noiseR[k] += specR[2 * k] * specR[2 * k] + specR[2 * k + 1] * specR[2 * k + 1]
        }
        noiseFrames += 1
    }

    static let overSubtraction: Float = 3

    /// Forgets the background.
    public func resetNoise() {
        noiseL.update(repeating: 0, count: fftSize / 2 + 1)
        noiseR.update(repeating: 0, count: fftSize / 2 + 1)
        noiseFrames = 0
    }

    /// Windows, zero-pads and transforms a frame pair into `specL` / `specR`; returns the frames' energies.
    @discardableResult
    private func transform(left: UnsafePointer<Float>, right: UnsafePointer<Float>) -> (Float, Float) {
        var energyL: Float = 0, energyR: Float = 0
        for i in 0..<frameLength {
            let l = left[i] * window[i], r = right[i] * window[i]
            inL[i] = l; inR[i] = r
            energyL += l * l; energyR += r * r
        }
        for i in frameLength..<fftSize { inL[i] = 0; inR[i] = 0 }
        forward.execute(inL, specL)
        forward.execute(inR, specR)
        return (energyL, energyR)
    }

    /// Forgets the accumulated frames (not the background: `resetNoise()`).
    public func reset() {
        accumulated.update(repeating: 0, count: 2 * (fftSize / 2 + 1))
        totalWeight = 0
    }

    /// Adds one frame pair (`frameLength` samples each) with `weight`. Returns false, adding nothing, when either
    /// frame is digitally silent (its phase says nothing).
    @discardableResult
    public func accumulate(left: UnsafePointer<Float>, right: UnsafePointer<Float>, weight: Float = 1) -> Bool {
        let (energyL, energyR) = transform(left: left, right: right)
        guard energyL > 1e-20, energyR > 1e-20 else { return false }
        let bins = fftSize / 2 + 1
        // The whitening floor: bins 60 dB below the frame's strongest cross-power are treated as noise-free zeros
        // rather than amplified to unit magnitude.
        var peak: Float = 0
        for k in 0..<bins {
            let re = specL[2 * k] * specR[2 * k] + specL[2 * k + 1] * specR[2 * k + 1]
            let im = specL[2 * k] * specR[2 * k + 1] - specL[2 * k + 1] * specR[2 * k]
            scratch[2 * k] = re; scratch[2 * k + 1] = im
            peak = max(peak, re * re + im * im)
        }
        let floor = peak.squareRoot() * 1e-6
        for k in 1..<(bins - 1) {   // DC and Nyquist carry no phase
            let re = scratch[2 * k], im = scratch[2 * k + 1]
            let magnitude = (re * re + im * im).squareRoot()
            guard magnitude > floor else { continue }
            var g = weight / magnitude
            if noiseFrames > 0 {
                // Over-subtraction 3 (as in spectral subtraction): a single frame's power fluctuates about its mean,
                // so a background bin must look 5 dB above the background's mean before it votes.
                let n = Self.overSubtraction / Float(noiseFrames)
                let pL = specL[2 * k] * specL[2 * k] + specL[2 * k + 1] * specL[2 * k + 1]
                let pR = specR[2 * k] * specR[2 * k] + specR[2 * k + 1] * specR[2 * k + 1]
                let sL = max(0, 1 - noiseL[k] * n / max(pL, 1e-30)), sR = max(0, 1 - noiseR[k] * n / max(pR, 1e-30))
                g *= sL * sR
                guard g > 0 else { continue }
            }
            accumulated[2 * k] += re * g
            accumulated[2 * k + 1] += im * g
        }
        totalWeight += weight
        return true
    }

    /// The accumulated correlation at lags −maxLag…maxLag into `out` (`2·maxLag + 1` values, `out[maxLag + τ]` is
    /// lag τ), normalised so that one frame pair of identical, delayed signals peaks near 1.
    public func correlation(into out: UnsafeMutablePointer<Float>) {
        let bins = fftSize / 2 + 1
        for i in 0..<(2 * bins) { scratch[i] = accumulated[i] }
        inverse.execute(scratch, time)
        // The unnormalised inverse of a unit-magnitude spectrum peaks at the number of bins used (bins − 2 pairs
        // of conjugate bins: 2·(bins − 2)); the weights scale it further.
        let scale = 1 / (Float(2 * (bins - 2)) * max(totalWeight, 1e-12))
        for tau in -maxLag...maxLag {
            let index = tau >= 0 ? tau : fftSize + tau
            out[maxLag + tau] = time[index] * scale
        }
    }

    /// The accumulated correlation as an array (see `correlation(into:)`).
    public func correlation() -> [Float] {
        [Float](unsafeUninitializedCapacity: 2 * maxLag + 1) { buffer, count in
            correlation(into: buffer.baseAddress!)
            count = 2 * maxLag + 1
        }
    }

    /// The delay of the accumulated frames: the correlation's highest peak, refined to a fraction of a sample by
    /// evaluating the band-limited correlation `r(τ) = Σₖ Re(Gₖ e^{2πikτ/N})` between the neighbouring lags
    /// (golden-section search). nil when nothing was accumulated.
    public func delay() -> (lag: Double, height: Float)? {
        guard totalWeight > 0 else { return nil }
        let r = correlation()
        guard let best = r.indices.max(by: { r[$0] < r[$1] }) else { return nil }
        let integer = best - maxLag
        let bins = fftSize / 2 + 1
        let n = Double(fftSize)
        let scale = 1 / (Double(2 * (bins - 2)) * Double(max(totalWeight, 1e-12)))
        func value(_ tau: Double) -> Double {
            var sum = 0.0
            let w = 2 * Double.pi * tau / n
            for k in 1..<(bins - 1) {
                let phase = w * Double(k)
                sum += Double(accumulated[2 * k]) * cos(phase) - Double(accumulated[2 * k + 1]) * sin(phase)
            }
            return 2 * sum * scale
        }
        var a = Double(integer) - 1, b = Double(integer) + 1
        let g = (5.0.squareRoot() - 1) / 2
        var c = b - g * (b - a), d = a + g * (b - a)
        var fc = value(c), fd = value(d)
        for _ in 0..<30 {
            if fc > fd { b = d; d = c; fd = fc; c = b - g * (b - a); fc = value(c) }
            else { a = c; c = d; fc = fd; d = a + g * (b - a); fd = value(d) }
        }
        let lag = max(-Double(maxLag), min(Double(maxLag), (a + b) / 2))
        return (lag, Float(value(lag)))
    }

    /// The delay of `right` relative to `left` over two whole signals: half-overlapping frames accumulated
    /// together (SRP-PHAT), then `delay()`. Resets first. nil for signals shorter than a frame or silent.
    public func delay(left: [Float], right: [Float]) -> (lag: Double, height: Float)? {
        reset()
        let count = min(left.count, right.count)
        guard count >= frameLength else { return nil }
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                var start = 0
                while start + frameLength <= count {
                    accumulate(left: l.baseAddress! + start, right: r.baseAddress! + start)
                    start += frameLength / 2
                }
            }
        }
        return delay()
    }
}
