import Foundation
import Testing
@testable import HeartSession

@Suite("HRV, frequency domain")
struct HRVFrequencyTests {
    /// Beats whose interval follows 1000 + a·sin(2π·0.1·t) + b·sin(2π·0.25·t) ms at the beat's time: an LF wave at
    /// 0.1 Hz and an HF (respiratory) wave at 0.25 Hz. A sine of amplitude A carries A²/2 of power.
    static func waves(lf a: Double, hf b: Double, seconds: Double) -> [Double] {
        var t = 0.0
        var nn: [Double] = []
        while t < seconds {
            let x = 1000 + a * sin(2 * Double.pi * 0.1 * t) + b * sin(2 * Double.pi * 0.25 * t)
            nn.append(x)
            t += x / 1000
        }
        return nn
    }

    /// The power a wave of amplitude `a` at `f` Hz keeps: a²/2 times sinc⁴(f · RR), the power response of linear
    /// interpolation between beats RR = 1 s apart (the method's known low-pass: 0.94 at 0.1 Hz, 0.66 at 0.25 Hz).
    static func expected(_ a: Double, at f: Double) -> Double {
        let x = Double.pi * f
        return a * a / 2 * pow(sin(x) / x, 4)
    }

    @Test func bandPowersAreTheWavesPowers() throws {
        let f = try #require(HRV.frequencyDomain(Self.waves(lf: 40, hf: 20, seconds: 600)))
        let lf = Self.expected(40, at: 0.1), hf = Self.expected(20, at: 0.25)
        #expect(abs(f.lf - lf) / lf < 0.05, "LF \(f.lf) ms², expected \(lf)")
        #expect(abs(f.hf - hf) / hf < 0.05, "HF \(f.hf) ms², expected \(hf)")
        #expect(abs(f.lfHfRatio - lf / hf) / (lf / hf) < 0.08 && abs(f.lfnu + f.hfnu - 100) < 1e-9)
        #expect(f.vlf < 0.02 * f.totalPower)
        let calm = try #require(HRV.frequencyDomain(Self.waves(lf: 10, hf: 30, seconds: 600)))
        #expect(calm.lfHfRatio < 0.2 && calm.hfnu > 85)
    }

    @Test func shortWindowsHaveNoSpectrum() {
        #expect(HRV.frequencyDomain(Self.waves(lf: 40, hf: 20, seconds: 100)) == nil)
        #expect(HRV.frequencyDomain(Self.waves(lf: 40, hf: 20, seconds: 130)) != nil)
        #expect(HRV.frequencyDomain([1000, .nan] + Self.waves(lf: 1, hf: 1, seconds: 200)) == nil)
    }
}
