// The resampler's measured quality table for docs/0002-audio-input-resampling.md. Off by default (a sweep);
// run with:  SLEEPCYCLE_RESAMPLER_REPORT=1 swift test --filter ResamplerQualityReport
import Foundation
import Testing
@testable import SleepCycleDSP

@Suite("ResamplerQualityReport",
       .enabled(if: ProcessInfo.processInfo.environment["SLEEPCYCLE_RESAMPLER_REPORT"] != nil, "report only on demand"))
struct ResamplerQualityReportTests {
    @Test("Sweep: pass-band ripple, stop-band / image level, click timing per input rate")
    func sweep() throws {
        var lines = ["| input rate | path | filter taps | pass-band ripple (dB, to 0.9·Nyq) | worst alias/image (dB) "
                     + "| click peak offset (samples) |", "|---:|---|---:|---:|---:|---:|"]
        for rate in ResamplerProbe.rates + [44_101] {
            let r = try Resampler(inputRate: rate)
            let count = rate / 5
            let nyquistLow = Double(min(rate, 16_000)) / 2
            // Pass band: 24 tones from 50 Hz to 0.9 × the lower Nyquist.
            var ripple = 0.0
            for i in 0..<24 {
                let f = 50 + (0.9 * nyquistLow - 50) * Double(i) / 23
                let y = try Resampler.resample(ResamplerProbe.sine(f, rate: rate, count: count), from: rate)
                let gain = 20 * log10(ResamplerProbe.amplitude(ResamplerProbe.middle(y), frequency: f, rate: 16_000) / 0.5)
                ripple = max(ripple, abs(gain))
            }
            // Stop band: down-sampling — 24 tones from 8.0 kHz to 0.99 × the input Nyquist, whole residual;
            // up-sampling — the image (rate − f) of 24 pass-band tones.
            var worst = -300.0
            for i in 0..<24 {
                if rate > 16_000 {
                    let f = 8_000 + (0.99 * Double(rate) / 2 - 8_000) * Double(i) / 23
                    let y = try Resampler.resample(ResamplerProbe.sine(f, rate: rate, count: count), from: rate)
                    let level = 20 * log10(max(1e-15, ResamplerProbe.rms(ResamplerProbe.middle(y))) / (0.5 / 2.squareRoot()))
                    worst = max(worst, level)
                } else {
                    let f = 50 + (0.9 * nyquistLow - 50) * Double(i) / 23
                    let y = try Resampler.resample(ResamplerProbe.sine(f, rate: rate, count: count), from: rate)
                    let image = ResamplerProbe.amplitude(ResamplerProbe.middle(y), frequency: Double(rate) - f, rate: 16_000)
                    worst = max(worst, 20 * log10(max(1e-15, image) / 0.5))
                }
            }
            // Clicks at 16 positions: parabolic-interpolated peak vs t·16000/rate.
            var offset = 0.0
            for i in 0..<16 {
                let t = count / 4 + i * (count / 40) + i * 7
                var x = [Float](repeating: 0, count: count)
                x[t] = 1
                let y = try Resampler.resample(x, from: rate)
                let k = y.indices.max { y[$0] < y[$1] }!
                let (a, b, c) = (Double(y[k - 1]), Double(y[k]), Double(y[k + 1]))
                let peak = Double(k) + 0.5 * (a - c) / (a - 2 * b + c)
                offset = max(offset, abs(peak - Double(t) * 16_000 / Double(rate)))
            }
            lines.append("| \(rate) | \(r.implementation) | \(r.filterLength) | \(String(format: "%.4f", ripple)) | "
                         + "\(String(format: "%.1f", worst)) | \(String(format: "%.3f", offset)) |")
            #expect(ripple <= 0.1 && worst <= -80 && offset <= 1, "rate \(rate)")
        }
        print(lines.joined(separator: "\n"))
    }
}
