// The resampler's measured quality, as the table in docs/0002-audio-input-resampling.md ("Measured quality").
//   swift run -c release --package-path Benchmarks resampler-report
// Per input rate: the worst pass-band gain error of 24 tones from 50 Hz to 0.9 × the lower Nyquist frequency; the
// worst stop-band level — down-sampling: the whole output of 24 tones from 8 kHz to 0.99 × the input Nyquist
// frequency, up-sampling: the image at rate − f of 24 pass-band tones; and the worst timing of 16 clicks (peak by
// parabolic interpolation against t · 16000 / rate). Exits 1 if a rate misses the specification (≤ 0.1 dB ripple,
// ≤ −80 dB, ± 1 sample).
import Foundation
import ReportSupport
import SleepCycleDSP

_ = ReportArguments(usage: "usage: resampler-report   (prints the resampler quality table of docs/0002)")

let rates = [8_000, 11_025, 22_050, 44_100, 48_000, 96_000, 192_000, 44_101]
print("| input rate | path | filter taps | pass-band ripple (dB, to 0.9·Nyq) | worst alias/image (dB) "
      + "| click peak offset (samples) |")
print("|---:|---|---:|---:|---:|---:|")
var failures: [String] = []
for rate in rates {
    let resampler = try Resampler(inputRate: rate)
    let count = rate / 5
    let nyquistLow = Double(min(rate, 16_000)) / 2
    let passband = (0..<24).map { 50 + (0.9 * nyquistLow - 50) * Double($0) / 23 }

    var ripple = 0.0
    for f in passband {
        let y = try Resampler.resample(ToneProbe.sine(f, rate: rate, count: count), from: rate)
        ripple = max(ripple, abs(20 * log10(ToneProbe.amplitude(ToneProbe.middle(y), frequency: f, rate: 16_000) / 0.5)))
    }

    var worst = -300.0
    if rate > 16_000 {
        for i in 0..<24 {
            let f = 8_000 + (0.99 * Double(rate) / 2 - 8_000) * Double(i) / 23
            let y = try Resampler.resample(ToneProbe.sine(f, rate: rate, count: count), from: rate)
            worst = max(worst, 20 * log10(max(1e-15, ToneProbe.rms(ToneProbe.middle(y))) / (0.5 / 2.squareRoot())))
        }
    } else {
        for f in passband {
            let y = try Resampler.resample(ToneProbe.sine(f, rate: rate, count: count), from: rate)
            let image = ToneProbe.amplitude(ToneProbe.middle(y), frequency: Double(rate) - f, rate: 16_000)
            worst = max(worst, 20 * log10(max(1e-15, image) / 0.5))
        }
    }

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

    print("| \(rate) | \(resampler.implementation) | \(resampler.filterLength) | \(String(format: "%.4f", ripple)) | "
          + "\(String(format: "%.1f", worst)) | \(String(format: "%.3f", offset)) |")
    if !(ripple <= 0.1 && worst <= -80 && offset <= 1) { failures.append("\(rate) Hz") }
}
if !failures.isEmpty {
    FileHandle.standardError.write(Data("resampler-report: outside the specification at \(failures.joined(separator: ", "))\n".utf8))
    exit(1)
}
