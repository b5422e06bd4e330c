// Resampler: length, streaming invariance, pass-band ripple, stop-band rejection, timing, both implementations.
import Foundation
import Testing
@testable import SleepCycleDSP

/// Test signals and measurements for the resampler (kept short: debug builds are slow).
enum ResamplerProbe {
    static func sine(_ frequency: Double, rate: Int, count: Int, amplitude: Double = 0.5) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    /// Amplitude of the `frequency` component of `x` (Hann-windowed single-bin DFT, amplitude-scaled).
    static func amplitude(_ x: ArraySlice<Float>, frequency: Double, rate: Int) -> Double {
        var re = 0.0, im = 0.0, wsum = 0.0
        let n = x.count
        for (i, v) in x.enumerated() {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
            let phase = 2 * Double.pi * frequency * Double(i) / Double(rate)
            re += w * Double(v) * cos(phase); im -= w * Double(v) * sin(phase)
            wsum += w
        }
        return 2 * (re * re + im * im).squareRoot() / wsum
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
    }

    /// The steady-state middle of a resampled signal (drops 0.05 s at each end: edge transients of the zero padding).
    static func middle(_ y: [Float], rate: Int = 16_000) -> ArraySlice<Float> {
        let edge = rate / 20
        return y[edge..<(y.count - edge)]
    }

    static let rates = [8_000, 11_025, 22_050, 44_100, 48_000, 96_000, 192_000]
}

@Suite("Resampler")
struct ResamplerTests {
    @Test("16 kHz input is passed through exactly")
    func passThrough() throws {
        let x = ResamplerProbe.sine(1234, rate: 16_000, count: 5000)
        let r = try Resampler(inputRate: 16_000)
        #expect(r.isPassThrough && r.implementation == "pass-through")
        #expect(try Resampler.resample(x, from: 16_000) == x)
    }

    @Test("Down-sampling from standard rates uses the spectral path, up-sampling and odd rates the polyphase path")
    func implementationChoice() throws {
        for rate in [22_050, 24_000, 32_000, 44_100, 48_000, 88_200, 96_000, 176_400, 192_000] {
            #expect(try Resampler(inputRate: rate).implementation == "spectral", "rate \(rate)")
        }
        for rate in [8_000, 11_025, 12_000, 44_101, 191_999] {
            #expect(try Resampler(inputRate: rate).implementation == "polyphase", "rate \(rate)")
        }
    }

    @Test("Output length is round(n · 16000 / rate) for any n", arguments: ResamplerProbe.rates + [44_101])
    func outputLength(rate: Int) throws {
        for n in [0, 1, 2, 7, 441, 1000, 12_345] {
            let x = [Float](repeating: 0.25, count: n)
            let y = try Resampler.resample(x, from: rate)
            let expected = Int((Double(n) * 16_000 / Double(rate)).rounded(.toNearestOrAwayFromZero))
            #expect(y.count == expected, "rate \(rate), n \(n)")
        }
    }

    @Test("Streaming in arbitrary chunks gives bit-identical output to one call", arguments: [11_025, 44_100, 48_000])
    func streamingInvariance(rate: Int) throws {
        var generator = ResamplerTestRNG(seed: UInt64(rate))
        let x = (0..<(rate / 2)).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        let whole = try Resampler.resample(x, from: rate)
        let r = try Resampler(inputRate: rate)
        var chunked: [Float] = []
        var i = 0
        while i < x.count {
            let n = min(x.count - i, Int.random(in: 0...3000, using: &generator))
            r.process(Array(x[i..<(i + n)]), into: &chunked)
            i += n
        }
        r.finish(into: &chunked)
        #expect(chunked == whole)
        // reset() starts over: the same input gives the same output again.
        r.reset()
        var again: [Float] = []
        r.process(x, into: &again)
        r.finish(into: &again)
        #expect(again == whole)
    }

    @Test("Pass band: tones up to 0.9 × the lower Nyquist keep their amplitude within 0.1 dB",
          arguments: ResamplerProbe.rates + [44_101])
    func passbandRipple(rate: Int) throws {
        let nyquistLow = Double(min(rate, 16_000)) / 2
        for fraction in [0.0125, 0.25, 0.5, 0.75, 0.9] {
            let f = fraction * nyquistLow
            let x = ResamplerProbe.sine(f, rate: rate, count: rate / 4, amplitude: 0.5)
            let y = try Resampler.resample(x, from: rate)
            let gainDB = 20 * log10(ResamplerProbe.amplitude(ResamplerProbe.middle(y), frequency: f, rate: 16_000) / 0.5)
            #expect(abs(gainDB) <= 0.1, "rate \(rate), \(f) Hz: \(gainDB) dB")
        }
    }

    @Test("Stop band: input tones above 8 kHz leave nothing below 8 kHz (≥ 80 dB down)",
          arguments: [22_050, 44_100, 48_000, 96_000, 192_000, 44_101])
    func aliasRejection(rate: Int) throws {
        let nyquistIn = Double(rate) / 2
        for f in [8_100.0, 8_500, 9_000, 11_000, 15_000, nyquistIn * 0.8, nyquistIn * 0.98] where f < nyquistIn {
            let x = ResamplerProbe.sine(f, rate: rate, count: rate / 4, amplitude: 0.5)
            let y = try Resampler.resample(x, from: rate)
            let levelDB = 20 * log10(max(1e-12, ResamplerProbe.rms(ResamplerProbe.middle(y))) / (0.5 / 2.squareRoot()))
            #expect(levelDB <= -80, "rate \(rate), \(f) Hz: \(levelDB) dB")
        }
    }

    @Test("Up-sampling: the image of a pass-band tone (at rate − f) is ≥ 80 dB down", arguments: [8_000, 11_025, 12_000])
    func imageRejection(rate: Int) throws {
        for f in [500.0, 0.5 * Double(rate) / 2, 0.9 * Double(rate) / 2] {
            let x = ResamplerProbe.sine(f, rate: rate, count: rate / 4, amplitude: 0.5)
            let y = ResamplerProbe.middle(try Resampler.resample(x, from: rate))
            let image = ResamplerProbe.amplitude(y, frequency: Double(rate) - f, rate: 16_000)
            let levelDB = 20 * log10(max(1e-12, image) / 0.5)
            #expect(levelDB <= -80, "rate \(rate), tone \(f) Hz, image \(Double(rate) - f) Hz: \(levelDB) dB")
        }
    }

    @Test("A click at input time t peaks at output time t (± 1 sample): the filter delay is compensated",
          arguments: ResamplerProbe.rates + [44_101])
    func clickTiming(rate: Int) throws {
        for seconds in [0.0, 0.1, 0.23456] {
            let t = Int(seconds * Double(rate))
            var x = [Float](repeating: 0, count: rate / 2)
            x[t] = 1
            let y = try Resampler.resample(x, from: rate)
            let peak = y.indices.max { abs(y[$0]) < abs(y[$1]) }!
            let expected = Double(t) * 16_000 / Double(rate)
            #expect(abs(Double(peak) - expected) <= 1, "rate \(rate), click at \(t): peak at \(peak), expected \(expected)")
        }
    }

    @Test("DC passes with unit gain and the output carries no block-boundary artefacts", arguments: [44_100, 96_000])
    func constantStaysConstant(rate: Int) throws {
        let x = [Float](repeating: 0.5, count: rate)
        let y = try Resampler.resample(x, from: rate)
        let inner = ResamplerProbe.middle(y)
        let worst = inner.map { abs(Double($0) - 0.5) }.max() ?? 1
        #expect(worst < 0.5e-4, "rate \(rate): max deviation \(worst)")
    }

    @Test("The spectral path agrees with the direct polyphase FIR of the same prototype (≤ −90 dB difference)",
          arguments: [22_050, 44_100, 48_000, 96_000])
    func spectralMatchesDirect(rate: Int) throws {
        var generator = ResamplerTestRNG(seed: 7)
        let x = (0..<(rate / 4)).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        let spectral = try Resampler.resample(x, from: rate)
        let direct = PolyphaseResampler(bank: PolyphaseFilterBank(inputRate: rate, outputRate: 16_000,
                                                                  quality: .standard))
        var y: [Float] = []
        x.withUnsafeBufferPointer { direct.process($0, into: &y) }
        direct.finish(totalOutputs: Int64(spectral.count), into: &y)
        #expect(y.count == spectral.count)
        let diff = zip(y, spectral).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +)
        let level = 10 * log10(diff / max(1e-30, y.map { Double($0) * Double($0) }.reduce(0, +)))
        #expect(level <= -90, "rate \(rate): spectral vs direct \(level) dB")
    }

    @Test("Rates outside 8–192 kHz are refused with a message naming the range")
    func invalidRates() {
        for rate in [0, 4_000, 7_999, 192_001, 384_000] {
            #expect(throws: ResamplerError.self) { try Resampler(inputRate: rate) }
        }
        let message = ResamplerError(inputRate: 4_000, outputRate: 16_000).description
        #expect(message.contains("4000 Hz") && message.contains("8000") && message.contains("192000"))
    }
}

/// A small deterministic generator (ResamplerTestRNG64, Steele et al. 2014) for reproducible random tests.
struct ResamplerTestRNG: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
