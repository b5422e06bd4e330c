// Test signals and measurements of the resampler report.
import Foundation

enum ToneProbe {
    static func sine(_ frequency: Double, rate: Int, count: Int, amplitude: Double = 0.5) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    /// Amplitude of the `frequency` component of `x` (Hann-windowed single-bin DFT, amplitude-scaled).
    static func amplitude(_ x: ArraySlice<Float>, frequency: Double, rate: Int) -> Double {
        var re = 0.0, im = 0.0, windowSum = 0.0
        let n = x.count
        for (i, v) in x.enumerated() {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
            let phase = 2 * Double.pi * frequency * Double(i) / Double(rate)
            re += w * Double(v) * cos(phase); im -= w * Double(v) * sin(phase)
            windowSum += w
        }
        return 2 * (re * re + im * im).squareRoot() / windowSum
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
    }

    /// The steady-state middle of a 16 kHz signal: 0.05 s dropped at each end (the zero padding's edge transients).
    static func middle(_ y: [Float]) -> ArraySlice<Float> {
        y[800..<(y.count - 800)]
    }
}
