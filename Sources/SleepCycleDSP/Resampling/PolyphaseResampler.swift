// The direct polyphase FIR path of `Resampler` (up-sampling, and rates the spectral path does not cover).

/// Streaming polyphase FIR conversion by L/M (Crochiere & Rabiner, *Multirate Digital Signal Processing*, 1983,
/// ch. 4.3) with the phase tables of `PolyphaseFilterBank`. Output k is Σ_j x[n0 + j] · h(p/L − j) where
/// k·M/L = n0 + p/L: the prototype is centred on the output instant (zero phase, no delay to compensate).
final class PolyphaseResampler: ResamplerCore {
    private let bank: PolyphaseFilterBank
    /// Input history; `history[0]` is the input sample with global index `historyStart` (negative = leading zeros).
    private var history: [Float] = []
    private var historyCount = 0
    private var historyStart: Int64 = 0
    /// Global index of the next output sample, and its position n0 + p/L on the input timeline.
    private var nextOutput: Int64 = 0
    private var baseIndex: Int64 = 0
    private var phase = 0

    init(bank: PolyphaseFilterBank) {
        self.bank = bank
        reset()
    }

    var filterLength: Int { 2 * bank.halfLength }

    func reset() {
        nextOutput = 0; baseIndex = 0; phase = 0
        // Leading zeros stand for the silence before the first sample (taps reach H − 1 samples back).
        historyStart = -Int64(bank.halfLength - 1)
        historyCount = bank.halfLength - 1
        if history.count < max(historyCount, 4096) { history = [Float](repeating: 0, count: max(historyCount, 4096) * 2) }
        for i in 0..<historyCount { history[i] = 0 }
    }

    func process(_ input: UnsafeBufferPointer<Float>, into output: inout [Float]) {
        append(input)
        emit(bank: bank, into: &output)
        discardConsumedHistory(bank: bank)
    }

    func finish(totalOutputs total: Int64, into output: inout [Float]) {
        let zeros = [Float](repeating: 0, count: bank.tapStride + 1)
        while nextOutput < total {
            zeros.withUnsafeBufferPointer { append($0) }
            emit(bank: bank, into: &output, limit: total)
            discardConsumedHistory(bank: bank)
        }
    }

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
        // The arithmetic per output wraps (`&+`, `&*`): positions are sample counts of one stream (2⁶³ samples are
        // millions of years at 192 kHz), p < up ≤ 192 000, row < phases and row·stride < the table's 2²² floats,
        // so nothing can overflow, and checking would add a fifth to each output's instructions.
        let reach = Int64(bank.halfLength - 1), stride64 = Int64(stride)
        history.withUnsafeBufferPointer { h in
            bank.coefficients.withUnsafeBufferPointer { c in
                while k < limit {
                    let first = base &- reach
                    if first &+ stride64 > available { break }
                    var row = p
                    var firstIndex = first
                    if quantised {
                        row = (p &* phases &+ up / 2) / up
                        if row == phases { row = 0; firstIndex &+= 1 }
                        if firstIndex &+ stride64 > available { break }
                    }
                    let x = h.baseAddress! + Int(firstIndex &- historyStart)
                    let taps = c.baseAddress! + row &* stride
                    output.append(dot(x, taps, stride))
                    k &+= 1
                    base &+= stepWhole
                    p &+= stepFrac
                    if p >= up { p &-= up; base &+= 1 }
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

/// Dot product of `count` floats (`count` a multiple of 8), with two SIMD8 accumulators. The index stays ≤ `count`
/// (a table row's length), so its arithmetic wraps.
@inline(__always)
private func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
    var acc0 = SIMD8<Float>(), acc1 = SIMD8<Float>()
    var i = 0
    while i &+ 16 <= count {
        acc0 += ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
            * rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
        acc1 += ra.loadUnaligned(fromByteOffset: i &* 4 &+ 32, as: SIMD8<Float>.self)
            * rb.loadUnaligned(fromByteOffset: i &* 4 &+ 32, as: SIMD8<Float>.self)
        i &+= 16
    }
    if i < count {
        acc0 += ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
            * rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
    }
    return (acc0 + acc1).sum()
}
