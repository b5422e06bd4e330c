// Streaming sample-rate conversion of one channel to the 16 kHz analysis rate.

/// A rate the resampler cannot convert.
public struct ResamplerError: Error, CustomStringConvertible, Sendable {
    public let inputRate: Int
    public let outputRate: Int
    public var description: String {
        "cannot resample \(inputRate) Hz to \(outputRate) Hz: rates must be between "
            + "\(Resampler.supportedRates.lowerBound) and \(Resampler.supportedRates.upperBound) Hz"
    }
}

/// Streaming conversion of one channel from any rate in 8–192 kHz to (normally) the 16 kHz analysis rate.
///
/// * **Filter**: a Kaiser-windowed sinc (Oppenheim & Schafer §7.6.1) with the pass band to 0.9 and the stop band
///   from 1.0 × the lower Nyquist frequency (7.2 / 8 kHz for 16 kHz output), ≥ 80 dB down (`ResamplerQuality`).
/// * **Two implementations, one response**. Down-sampling by L/M with M ≤ `SpectralResampler.maxDownFactor` runs
///   the *spectral* path (`SpectralResampler`: overlap-save FFT filtering and band-limited evaluation on the output
///   grid, Crochiere & Rabiner 1983 §3.4 / Oppenheim & Schafer §8.7.3) — 4–5× fewer operations than direct
///   convolution for 44.1 → 16 kHz. Up-sampling (8–16 kHz input) and rates with a large M run the direct
///   *polyphase* FIR (`PolyphaseResampler`, Crochiere & Rabiner ch. 4.3).
/// * **Timeline**: output k is the filtered input evaluated at input time k·M/L. The prototype is centred on that
///   instant (zero phase), so there is no group delay left to compensate: a click at input time t appears at output
///   time t. The start is padded with zeros (as if silence preceded the input) and `finish` pads the end, so the
///   total output length is round(n · outputRate / inputRate) for n input samples.
/// * **Pass-through**: equal rates copy the input exactly (no filtering).
/// * **Lifecycle**: `init` validates and builds the tables and plans; `process` appends to
///   caller-owned storage (allocating only when that storage grows); `finish` flushes; `reset` restarts.
///
/// One instance per channel (it keeps that channel's history). Not thread-safe; instances are independent.
public final class Resampler {
    /// Input rates accepted (Hz).
    public static let supportedRates = 8_000...192_000

    public let inputRate: Int
    public let outputRate: Int
    /// True when input and output rates are equal: samples are copied unchanged.
    public let isPassThrough: Bool
    /// Which implementation runs ("pass-through", "spectral" or "polyphase").
    public let implementation: String

    private let core: ResamplerCore?
    private let upFactor: Int64
    private let downFactor: Int64
    /// Input samples received since the start / last reset.
    private var inputCount: Int64 = 0
    private var finished = false

    public init(inputRate: Int, outputRate: Int = 16_000, quality: ResamplerQuality = .standard) throws(ResamplerError) {
        guard Self.supportedRates.contains(inputRate), Self.supportedRates.contains(outputRate) else {
            throw ResamplerError(inputRate: inputRate, outputRate: outputRate)
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        isPassThrough = inputRate == outputRate
        let g = PolyphaseFilterBank.gcd(inputRate, outputRate)
        upFactor = Int64(outputRate / g)
        downFactor = Int64(inputRate / g)
        if isPassThrough {
            core = nil; implementation = "pass-through"
        } else if let spectral = SpectralResampler(inputRate: inputRate, outputRate: outputRate, quality: quality) {
            core = spectral; implementation = "spectral"
        } else {
            core = PolyphaseResampler(bank: PolyphaseFilterBankCache.shared.bank(
                inputRate: inputRate, outputRate: outputRate, quality: quality))
            implementation = "polyphase"
        }
    }

    /// Length of the prototype filter in input samples (0 for pass-through).
    public var filterLength: Int { core?.filterLength ?? 0 }

    /// Number of output samples for `inputCount` input samples: round(n · outputRate / inputRate).
    public func outputCount(forInputCount n: Int64) -> Int64 {
        isPassThrough ? n : (2 * n * upFactor + downFactor) / (2 * downFactor)
    }

    /// Restarts the stream: history cleared, next output is sample 0.
    public func reset() {
        inputCount = 0; finished = false
        core?.reset()
    }

    /// Feeds input samples and appends every output sample they complete to `output`.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: inout [Float]) {
        precondition(!finished, "Resampler.process after finish; call reset() first")
        inputCount += Int64(input.count)
        guard let core else { output.append(contentsOf: input); return }
        core.process(input, into: &output)
    }

    /// Convenience for arrays.
    public func process(_ input: [Float], into output: inout [Float]) {
        input.withUnsafeBufferPointer { process($0, into: &output) }
    }

    /// Ends the stream: pads with silence and appends the remaining outputs, so that the total is
    /// `outputCount(forInputCount:)` of all input. Call `reset()` before reusing the instance.
    public func finish(into output: inout [Float]) {
        guard !finished else { return }
        finished = true
        core?.finish(totalOutputs: outputCount(forInputCount: inputCount), into: &output)
    }

    /// One-shot conversion of a whole signal (tests, tools).
    public static func resample(_ input: [Float], from inputRate: Int, to outputRate: Int = 16_000,
                                quality: ResamplerQuality = .standard) throws(ResamplerError) -> [Float] {
        let r = try Resampler(inputRate: inputRate, outputRate: outputRate, quality: quality)
        var out: [Float] = []
        out.reserveCapacity(Int(r.outputCount(forInputCount: Int64(input.count))))
        r.process(input, into: &out)
        r.finish(into: &out)
        return out
    }
}

/// The streaming conversion behind `Resampler` (one per channel).
protocol ResamplerCore: AnyObject {
    /// Prototype taps, in input samples.
    var filterLength: Int { get }
    func reset()
    /// Appends every output the input completes.
    func process(_ input: UnsafeBufferPointer<Float>, into output: inout [Float])
    /// Pads with silence and appends outputs until `total` outputs have been produced in all.
    func finish(totalOutputs total: Int64, into output: inout [Float])
}
