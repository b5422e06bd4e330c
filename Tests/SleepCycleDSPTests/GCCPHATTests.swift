import Foundation
import Testing
@testable import SleepCycleDSP

@Suite("GCC-PHAT")
struct GCCPHATTests {
    /// Deterministic white noise (xorshift), uniform in −1…1.
    static func noise(_ count: Int, seed: UInt64) -> [Float] {
        var state = seed | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Float(Double(state % 2_000_001) / 1_000_000 - 1)
        }
    }

    /// `x` delayed by `delay` samples (fractional), by a windowed-sinc interpolator of 64 taps each side.
    static func delayed(_ x: [Float], by delay: Double) -> [Float] {
        (0..<x.count).map { n in
            let t = Double(n) - delay
            let centre = Int(t.rounded(.down))
            var sum = 0.0
            for k in (centre - 63)...(centre + 64) where k >= 0 && k < x.count {
                let u = t - Double(k)
                let sinc = abs(u) < 1e-12 ? 1 : sin(Double.pi * u) / (Double.pi * u)
                let w = 0.5 + 0.5 * cos(Double.pi * u / 64)
                sum += Double(x[k]) * sinc * w
            }
            return Float(sum)
        }
    }

    @Test("integer delays are found exactly, either sign", arguments: [-37, -5, -1, 0, 1, 3, 12, 90])
    func integerDelay(_ delay: Int) throws {
        let source = Self.noise(16_000 + 200, seed: 7)
        let left = Array(source[100..<(16_100)])
        let right = Array(source[(100 - delay)..<(16_100 - delay)])
        let gcc = try GCCPHAT(frameLength: 1024, maxLag: 100)
        let found = try #require(gcc.delay(left: left, right: right))
        #expect(abs(found.lag - Double(delay)) < 0.02)
        // The windows overlap less as the delay grows, so the peak is a little lower for long delays.
        #expect(found.height > 0.85)
    }

    @Test("fractional delays are found to a twentieth of a sample", arguments: [0.25, 0.5, 2.3, -4.7, 7.75])
    func fractionalDelay(_ delay: Double) throws {
        let source = Self.noise(12_000, seed: 11)
        let right = Self.delayed(source, by: delay)
        let gcc = try GCCPHAT(frameLength: 1024, maxLag: 16)
        let found = try #require(gcc.delay(left: Array(source[200..<11_800]), right: Array(right[200..<11_800])))
        #expect(abs(found.lag - delay) < 0.05, "found \(found.lag) for \(delay)")
    }

    @Test("a delayed copy in independent noise at 0 dB SNR is still found")
    func noisyDelay() throws {
        let source = Self.noise(32_000 + 64, seed: 3)
        let n1 = Self.noise(32_000, seed: 99), n2 = Self.noise(32_000, seed: 1234)
        let left = (0..<32_000).map { source[$0 + 64] + n1[$0] }
        let right = (0..<32_000).map { source[$0 + 64 - 9] + n2[$0] }
        let gcc = try GCCPHAT(frameLength: 1024, maxLag: 20)
        let found = try #require(gcc.delay(left: left, right: right))
        #expect(abs(found.lag - 9) < 0.2)
        #expect(found.height < 0.9)   // half the power is uncorrelated: a lower peak (a coherence cue)
    }

    @Test("an echo (reflection) does not pull the direct path's peak")
    func reflection() throws {
        let source = Self.noise(24_000, seed: 5)
        let direct = Self.delayed(source, by: 4)
        let echo = Self.delayed(source, by: 30)
        let right = zip(direct, echo).map { $0 + 0.6 * $1 }
        let gcc = try GCCPHAT(frameLength: 1024, maxLag: 40)
        let found = try #require(gcc.delay(left: source, right: right))
        #expect(abs(found.lag - 4) < 0.1)
    }

    @Test("silence gives no delay; bad parameters are refused")
    func silenceAndParameters() throws {
        let gcc = try GCCPHAT(frameLength: 256, maxLag: 10)
        #expect(gcc.delay(left: [Float](repeating: 0, count: 4096), right: Self.noise(4096, seed: 1)) == nil)
        #expect(gcc.delay(left: [1, 2, 3], right: [1, 2, 3]) == nil)
        #expect(throws: DSPError.self) { try GCCPHAT(frameLength: 256, maxLag: 256) }
        #expect(throws: DSPError.self) { try GCCPHAT(frameLength: 8, maxLag: 2) }
    }

    @Test("the inverse plan undoes the forward one (times its size)")
    func inverseRoundTrip() {
        let n = 64
        let x = Self.noise(n, seed: 42)
        let input = FFTBuffer.allocate(n), spectrum = FFTBuffer.allocate(n + 2), output = FFTBuffer.allocate(n)
        defer { FFTBuffer.deallocate(input); FFTBuffer.deallocate(spectrum); FFTBuffer.deallocate(output) }
        for i in 0..<n { input[i] = x[i] }
        RealFFTPlan.forward(size: n).execute(input, spectrum)
        RealInverseFFTPlan.inverse(size: n).execute(spectrum, output)
        for i in 0..<n { #expect(abs(output[i] / Float(n) - x[i]) < 1e-5) }
    }
}

extension GCCPHATTests {
    @Test("with the background given, a coherent noise source does not pull the peak to its own delay")
    func snrWeighting() throws {
        // A loud low-passed "fan" from the right (delay −12), all the time; a quieter broadband sound from the left
        // (delay +6) on top of it. The fan dominates the lower three quarters of the band: plain PHAT follows it.
        let n = 16_384
        let white = Self.noise(n + 64, seed: 21)
        var fan = [Float](repeating: 0, count: n + 64)
        for i in 3..<(n + 64) { fan[i] = 4 * (white[i] + white[i - 1] + white[i - 2] + white[i - 3]) }
        let sound: [Float] = Self.noise(n + 64, seed: 22).map { $0 * 0.5 }
        var left = [Float](repeating: 0, count: n), right = left, background = left, backgroundR = left
        for i in 0..<n {
            background[i] = fan[i + 20]
            backgroundR[i] = fan[i + 32]
            left[i] = background[i] + sound[i + 32]
            right[i] = backgroundR[i] + sound[i + 26]
        }
        func delay(_ gcc: GCCPHAT) throws -> Double {
            left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in
                    for start in stride(from: 0, to: n - 512, by: 256) {
                        gcc.accumulate(left: l.baseAddress! + start, right: r.baseAddress! + start)
                    }
                }
            }
            return try #require(gcc.delay()).lag
        }
        let plain = try GCCPHAT(frameLength: 512, maxLag: 20)
        let plainLag = try delay(plain)
        #expect(abs(plainLag + 12) < 0.5, "plain PHAT follows the fan: \(plainLag)")
        let gcc = try GCCPHAT(frameLength: 512, maxLag: 20)
        background.withUnsafeBufferPointer { l in
            backgroundR.withUnsafeBufferPointer { r in
                for start in stride(from: 0, to: n - 512, by: 512) {
                    gcc.accumulateNoise(left: l.baseAddress! + start, right: r.baseAddress! + start)
                }
            }
        }
        let found = try delay(gcc)
        #expect(abs(found - 6) < 0.5, "found \(found)")
        gcc.resetNoise()
        #expect(gcc.noiseFrames == 0)
    }
}

@Suite("Vector kernels")
struct VectorKernelTests {
    @Test("16-bit conversion: scaled, rounded, clamped, every length")
    func toInt16() {
        for n in [0, 1, 7, 8, 9, 23] {
            let x: [Float] = (0..<n).map { i in [0.5, -0.25, 1.5, -3, 1 / 32767, -0.99999, 0, 1][i % 8] }
            var out = [Int16](repeating: 99, count: n)
            x.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    VectorKernels.toInt16(src.baseAddress ?? UnsafePointer(bitPattern: 8)!, dst.baseAddress ?? UnsafeMutablePointer(bitPattern: 8)!, count: n)
                }
            }
            let expected: [Int16] = x.map { Int16((max(-32767, min(32767, $0 * 32767))).rounded(.toNearestOrEven)) }
            #expect(out == expected, "n = \(n)")
        }
    }

    @Test("centred energy removes the mean")
    func centredEnergy() {
        let x: [Float] = [1.5, 0.5, 1.5, 0.5, 1.5, 0.5, 1.5, 0.5, 1.5]
        let e = x.withUnsafeBufferPointer { VectorKernels.centredEnergy($0.baseAddress!, count: x.count) }
        let mean = x.reduce(0, +) / Float(x.count)
        let expected = x.map { ($0 - mean) * ($0 - mean) }.reduce(0, +)
        #expect(abs(e - expected) < 1e-4)
    }
}
