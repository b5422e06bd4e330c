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

/// Streaming polyphase FIR resampler for one channel (rational factor L/M; Crochiere & Rabiner 1983, ch. 4.3),
/// with a Kaiser-windowed sinc prototype (see `PolyphaseFilterBank`, `ResamplerQuality`).
///
/// * **Timeline**: output k is the filtered input evaluated at input time k·M/L. The prototype is centred on that
///   instant (zero phase), so there is no group delay to compensate: a click at input time t appears at output time
///   t. The start is padded with zeros (as if silence preceded the input) and `finish` pads the end, so the total
///   output length is round(n · outputRate / inputRate) for n input samples.
/// * **Pass-through**: equal rates copy the input exactly (no filtering).
/// * **Lifecycle** (STYLE.md #4): `init` validates and builds the tables; `process` appends to caller-owned storage
///   and allocates only when that storage or the internal history must grow; `finish` flushes; `reset` restarts.
///
/// One instance per channel (it keeps that channel's history); instances for the same rates share nothing mutable.
public final class Resampler {
    /// Input rates accepted (Hz).
    public static let supportedRates = 8_000...192_000

    public let inputRate: Int
    public let outputRate: Int
    /// True when input and output rates are equal: samples are copied unchanged.
    public let isPassThrough: Bool

    private let bank: PolyphaseFilterBank?
    /// Input history; `history[0]` is the input sample with global index `historyStart` (negative = leading zeros).
    private var history: [Float] = []
    private var historyCount = 0
    private var historyStart: Int64 = 0
    /// Global index of the next output sample, and its position n0 + p/L on the input timeline.
    private var nextOutput: Int64 = 0
    private var baseIndex: Int64 = 0
    private var phase = 0
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
        bank = isPassThrough ? nil : PolyphaseFilterBank(inputRate: inputRate, outputRate: outputRate, quality: quality)
        reset()
    }

    /// Taps per output sample (0 for pass-through): the cost per output is this many multiply-adds.
    public var tapsPerOutput: Int { bank?.tapStride ?? 0 }

    /// Number of output samples for `inputCount` input samples: round(n · outputRate / inputRate).
    public func outputCount(forInputCount n: Int64) -> Int64 {
        guard let bank else { return n }
        let up = Int64(bank.upFactor), down = Int64(bank.downFactor)
        return (2 * n * up + down) / (2 * down)
    }

    /// Restarts the stream: history cleared, next output is sample 0.
    public func reset() {
        inputCount = 0; nextOutput = 0; baseIndex = 0; phase = 0; finished = false
        guard let bank else { return }
        // Leading zeros stand for the silence before the first sample (taps reach H − 1 samples back).
        historyStart = -Int64(bank.halfLength - 1)
        historyCount = bank.halfLength - 1
        if history.count < max(historyCount, 4096) { history = [Float](repeating: 0, count: max(historyCount, 4096) * 2) }
        for i in 0..<historyCount { history[i] = 0 }
    }

    /// Feeds input samples and appends every output sample they complete to `output`.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: inout [Float]) {
        precondition(!finished, "Resampler.process after finish; call reset() first")
        inputCount += Int64(input.count)
        guard let bank else { output.append(contentsOf: input); return }
        append(input)
        emit(bank: bank, into: &output)
        discardConsumedHistory(bank: bank)
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
        guard let bank else { return }
        let total = outputCount(forInputCount: inputCount)
        let zeros = [Float](repeating: 0, count: bank.tapStride + 1)
        while nextOutput < total {
            zeros.withUnsafeBufferPointer { append($0) }
            emit(bank: bank, into: &output, limit: total)
            discardConsumedHistory(bank: bank)
        }
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

    // MARK: - Internals

    private func append(_ input: UnsafeBufferPointer<Float>) {
        let needed = historyCount + input.count
        if needed > history.count {
            history.append(contentsOf: repeatElement(0, count: needed * 2 - history.count))
        }
        history.withUnsafeMutableBufferPointer { h in
            guard let base = input.baseAddress, input.count > 0 else { return }
            (h.baseAddress! + historyCount).update(from: base, count: input.count)
        }
        historyCount = needed
    }

    private func emit(bank: PolyphaseFilterBank, into output: inout [Float], limit: Int64 = .max) {
        let up = bank.upFactor, stride = bank.tapStride, phases = bank.phaseCount
        let stepWhole = Int64(bank.downFactor / up), stepFrac = bank.downFactor % up
        let quantised = phases != up
        let available = historyStart + Int64(historyCount)
        var base = baseIndex, p = phase, k = nextOutput
        history.withUnsafeBufferPointer { h in
            bank.coefficients.withUnsafeBufferPointer { c in
                while k < limit {
                    let first = base - Int64(bank.halfLength - 1)
                    if first + Int64(stride) > available { break }
                    var row = p
                    var firstIndex = first
                    if quantised {
                        row = (p * phases + up / 2) / up
                        if row == phases { row = 0; firstIndex += 1 }
                        if firstIndex + Int64(stride) > available { break }
                    }
                    let x = h.baseAddress! + Int(firstIndex - historyStart)
                    let taps = c.baseAddress! + row * stride
                    output.append(dot(x, taps, stride))
                    k += 1
                    base += stepWhole
                    p += stepFrac
                    if p >= up { p -= up; base += 1 }
                }
            }
        }
        baseIndex = base; phase = p; nextOutput = k
    }

    /// Drops history samples that no future output can reach.
    private func discardConsumedHistory(bank: PolyphaseFilterBank) {
        let keepFrom = baseIndex - Int64(bank.halfLength - 1)
        let drop = Int(min(max(0, keepFrom - historyStart), Int64(historyCount)))
        guard drop > 0 else { return }
        let remaining = historyCount - drop
        history.withUnsafeMutableBufferPointer { h in
            if remaining > 0 { h.baseAddress!.update(from: h.baseAddress! + drop, count: remaining) }
        }
        historyCount = remaining
        historyStart += Int64(drop)
    }
}

/// Dot product of `count` floats (`count` a multiple of 8), with two SIMD8 accumulators.
@inline(__always)
private func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
    var acc0 = SIMD8<Float>(), acc1 = SIMD8<Float>()
    var i = 0
    while i + 16 <= count {
        acc0 += ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            * rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        acc1 += ra.loadUnaligned(fromByteOffset: i * 4 + 32, as: SIMD8<Float>.self)
            * rb.loadUnaligned(fromByteOffset: i * 4 + 32, as: SIMD8<Float>.self)
        i += 16
    }
    if i < count {
        acc0 += ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            * rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
    }
    return (acc0 + acc1).sum()
}
