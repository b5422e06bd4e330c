// The FFT (overlap-save) path of `Resampler`, used for down-sampling to 16 kHz.
import Foundation

/// Streaming down-sampling by L/M through the frequency domain: overlap-save FIR filtering (Oppenheim & Schafer,
/// *Discrete-Time Signal Processing*, 3rd ed., §8.7.3) fused with band-limited evaluation of the filtered signal on
/// the output grid by truncating its spectrum (Crochiere & Rabiner, *Multirate Digital Signal Processing*, 1983,
/// §3.4; the DFT-domain rate change of e.g. Fraser's "FFT-based sampling rate conversion").
///
/// For a block of N = M·j input samples starting at s (a multiple of M), with X its DFT and H the DFT of the
/// zero-phase Kaiser-windowed sinc h (half-width T ≤ pad, |H| ≤ −80 dB from the output Nyquist up):
///
///     z[k'] = (1/N) Σ_{|f| < N'/2} X[f] · H[f] · e^{2πi f k' / N'},   N' = L·j,
///
/// is the filtered input evaluated at input time s + k'·M/L. Outputs whose filter support lies inside the block
/// (`pad` samples from either edge) equal the linear, time-invariant result; consecutive blocks overlap by 2·pad.
/// The inverse transform of the Hermitian spectrum is done with the forward real FFT through the Hartley identity
/// y[n] = Re U[n] + Im U[n], U = DFT(Re Y + Im Y) (Bracewell, *The Hartley Transform*, 1986), so that only the
/// shared forward plans of `FFTPlanCache` are needed.
///
/// Cost per output ≈ (N log N + N' log N') / (L·(j − 2a)) instead of 2T multiply-adds: for 44.1 → 16 kHz about
/// 5× less than the equivalent direct FIR.
final class SpectralResampler: ResamplerCore {
    /// Largest M (input rate / gcd) handled; larger ones (odd rates) use the polyphase path.
    static let maxDownFactor = 4096

    let up: Int
    let down: Int
    /// N and N': input and output samples per FFT block.
    let blockInput: Int
    let blockOutput: Int
    /// Input samples on each side of a block that only feed the filter (a multiple of M, ≥ T).
    let pad: Int
    /// Valid outputs per block (K = L·(j − 2a)) and the input hop (V = M·(j − 2a)).
    let validOutputs: Int
    let hopInput: Int
    /// Prototype taps (2T + 1).
    let filterLength: Int

    private let response: [Float]            // H[f] / N for f in 0...N'/2
    private let forward: RealFFTPlan
    private let hartley: RealFFTPlan
    private let fftIn: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<Float>
    private let folded: UnsafeMutablePointer<Float>
    private let foldedSpectrum: UnsafeMutablePointer<Float>
    /// One block's valid outputs, before they are appended to the caller's array.
    private let outputs: UnsafeMutablePointer<Float>

    private var history: [Float] = []
    private var historyCount = 0
    private var historyStart: Int64 = 0
    private var blockStart: Int64 = 0
    private var produced: Int64 = 0

    /// Returns nil when this path does not apply (up-sampling, M too large, or a stop band beyond the output Nyquist).
    init?(inputRate: Int, outputRate: Int, quality: ResamplerQuality) {
        guard inputRate > outputRate, quality.stopbandEdge <= 1.0 else { return nil }
        let g = PolyphaseFilterBank.gcd(inputRate, outputRate)
        up = outputRate / g
        down = inputRate / g
        // Odd rates (M with a large prime factor, or huge) use the polyphase path: their FFT sizes would be slow.
        guard down <= Self.maxDownFactor, Self.isSmooth(down) else { return nil }

        // Prototype h(n), n ∈ [−T, T], in input samples (same design as PolyphaseFilterBank).
        let fsIn = Double(inputRate), nyquistOut = Double(outputRate) / 2
        let cutoff = nyquistOut * (quality.passbandEdge + quality.stopbandEdge) / 2 / fsIn
        let transition = nyquistOut * (quality.stopbandEdge - quality.passbandEdge) / fsIn
        let halfWidth = KaiserDesign.order(attenuationDB: quality.attenuationDB, transitionCyclesPerSample: transition) / 2
        let beta = KaiserDesign.beta(attenuationDB: quality.attenuationDB)
        let t = Int(halfWidth.rounded(.down))
        var h = [Double](repeating: 0, count: t + 1)
        for n in 0...t {
            let x = 2 * cutoff * Double(n)
            let sinc = n == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
            h[n] = 2 * cutoff * sinc * KaiserDesign.window(Double(n) / halfWidth, beta: beta)
        }
        let dc = h[0] + 2 * h.dropFirst().reduce(0, +)
        filterLength = 2 * t + 1

        // Block geometry: pad = a·M ≥ T (+2 samples of margin); N = j·M and N' = j·L with j the smallest power of
        // two giving N ≥ max(8192, 16·pad) (M and L are 7-smooth, so both FFT sizes are; N' is even). Measured with
        // FFTW_ESTIMATE plans, powers of two beat other smooth j (e.g. 44.1 kHz: j = 32 → 3.9 ns/output, j = 40 →
        // 4.4 ns/output).
        let a = (t + 2 + down - 1) / down
        pad = a * down
        let target = max(8192, 16 * pad)
        var j = 2
        while j < 2 * a + 1 || j * down < target { j *= 2 }
        blockInput = j * down
        blockOutput = j * up
        validOutputs = (j - 2 * a) * up
        hopInput = (j - 2 * a) * down

        // H[f] = Σ_n h(n) cos(2π f n / N) (real: h is even), normalised to unit DC gain and divided by N.
        var r = [Float](repeating: 0, count: blockOutput / 2 + 1)
        for f in 0..<(blockOutput / 2) {
            var sum = h[0]
            let w = 2 * Double.pi * Double(f) / Double(blockInput)
            for n in 1...max(1, t) where n <= t { sum += 2 * h[n] * cos(w * Double(n)) }
            r[f] = Float(sum / dc / Double(blockInput))
        }
        r[blockOutput / 2] = 0
        response = r

        forward = RealFFTPlan.forward(size: blockInput)
        hartley = RealFFTPlan.forward(size: blockOutput)
        fftIn = FFTBuffer.allocate(blockInput)
        spectrum = FFTBuffer.allocate(2 * (blockInput / 2 + 1))
        folded = FFTBuffer.allocate(blockOutput)
        foldedSpectrum = FFTBuffer.allocate(2 * (blockOutput / 2 + 1))
        outputs = FFTBuffer.allocate(validOutputs)
        reset()
    }

    deinit {
        FFTBuffer.deallocate(fftIn); FFTBuffer.deallocate(spectrum)
        FFTBuffer.deallocate(folded); FFTBuffer.deallocate(foldedSpectrum); FFTBuffer.deallocate(outputs)
    }

    func reset() {
        produced = 0
        blockStart = -Int64(pad)
        historyStart = -Int64(pad)
        historyCount = pad        // leading silence before sample 0
        if history.count < 2 * blockInput { history = [Float](repeating: 0, count: 2 * blockInput) }
        for i in 0..<pad { history[i] = 0 }
    }

    func process(_ input: UnsafeBufferPointer<Float>, into output: inout [Float]) {
        append(input)
        runBlocks(into: &output, limit: .max)
    }

    func finish(totalOutputs total: Int64, into output: inout [Float]) {
        let zeros = [Float](repeating: 0, count: blockInput)
        while produced < total {
            zeros.withUnsafeBufferPointer { append($0) }
            runBlocks(into: &output, limit: total)
        }
    }

    // MARK: - Internals

    private func append(_ input: UnsafeBufferPointer<Float>) {
        guard let base = input.baseAddress, input.count > 0 else { return }
        let needed = historyCount + input.count
        if needed > history.count { history.append(contentsOf: repeatElement(0, count: needed + blockInput - history.count)) }
        history.withUnsafeMutableBufferPointer { h in
            (h.baseAddress! + historyCount).update(from: base, count: input.count)
        }
        historyCount = needed
    }

    private func runBlocks(into output: inout [Float], limit: Int64) {
        while produced < limit, blockStart + Int64(blockInput) <= historyStart + Int64(historyCount) {
            let offset = Int(blockStart - historyStart)
            history.withUnsafeBufferPointer { h in fftIn.update(from: h.baseAddress! + offset, count: blockInput) }
            transformBlock()
            let count = Int(min(Int64(validOutputs), limit - produced))
            unfoldOutputs(count: count)
            output.append(contentsOf: UnsafeBufferPointer(start: outputs, count: count))
            produced += Int64(count)
            blockStart += Int64(hopInput)
        }
        // Drop input no future block reads.
        let drop = Int(min(max(0, blockStart - historyStart), Int64(historyCount)))
        if drop > 0 {
            let remaining = historyCount - drop
            history.withUnsafeMutableBufferPointer { h in
                if remaining > 0 { h.baseAddress!.update(from: h.baseAddress! + drop, count: remaining) }
            }
            historyCount = remaining
            historyStart += Int64(drop)
        }
    }

    /// fftIn → X → Y = X·H (bins below N'/2) → folded u = Re Y + Im Y (Hermitian-extended) → U = DFT(u).
    /// Indices (below 2·(N/2 + 1)) use wrapping arithmetic: they cannot overflow, and checking would cost more
    /// than the multiply-adds.
    private func transformBlock() {
        forward.execute(fftIn, spectrum)
        let n = blockOutput, half = blockOutput / 2
        response.withUnsafeBufferPointer { r in
            folded[0] = spectrum[0] * r[0]
            folded[half] = 0
            var f = 1
            while f < half {
                let re = spectrum[2 &* f] * r[f], im = spectrum[2 &* f &+ 1] * r[f]
                folded[f] = re + im
                folded[n &- f] = re - im
                f &+= 1
            }
        }
        hartley.execute(folded, foldedSpectrum)
    }

    /// Writes this block's first `count` valid outputs into `outputs`: output k' = Re U[k'] + Im U[k'] for
    /// k' ≤ N'/2 and Re U[N' − k'] − Im U[N' − k'] above (the Hartley identity with U Hermitian), for
    /// k' = first, first + 1, …, first = (pad / M)·L. Eight outputs at a time where the bins are consecutive;
    /// each value is the same single addition or subtraction as one at a time. Indices stay below 2·(N'/2 + 1),
    /// so they use wrapping arithmetic.
    private func unfoldOutputs(count: Int) {
        let u = UnsafeRawPointer(foldedSpectrum), z = outputs
        let n = blockOutput, half = blockOutput / 2, first = (pad / down) * up
        // Outputs i < lowCount read bin k = first + i ≤ half, ascending.
        let lowCount = min(count, max(0, half &+ 1 &- first))
        var i = 0
        while i &+ 8 <= lowCount {
            let c = u.loadUnaligned(fromByteOffset: 8 &* (first &+ i), as: SIMD16<Float>.self)
            store8(c.evenHalf + c.oddHalf, z, i)
            i &+= 8
        }
        while i < lowCount {
            let k = first &+ i
            z[i] = foldedSpectrum[2 &* k] + foldedSpectrum[2 &* k &+ 1]
            i &+= 1
        }
        // The rest read bin m = N' − (first + i) < half, descending: eight bins m − 7 … m loaded together,
        // their results stored in reverse lane order.
        while i &+ 8 <= count {
            let m = n &- (first &+ i)
            let c = u.loadUnaligned(fromByteOffset: 8 &* (m &- 7), as: SIMD16<Float>.self)
            let d = c.evenHalf - c.oddHalf
            store8(SIMD8(d[7], d[6], d[5], d[4], d[3], d[2], d[1], d[0]), z, i)
            i &+= 8
        }
        while i < count {
            let m = n &- (first &+ i)
            z[i] = foldedSpectrum[2 &* m] - foldedSpectrum[2 &* m &+ 1]
            i &+= 1
        }
    }

    /// True when n has no prime factor above 7 (fast FFTW sizes).
    private static func isSmooth(_ n: Int) -> Bool {
        var m = n
        for p in [2, 3, 5, 7] { while m % p == 0 { m /= p } }
        return m == 1
    }
}
