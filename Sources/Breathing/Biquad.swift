import Foundation

/// A second-order IIR section (transposed direct form II), designed with the RBJ cookbook formulas.
///
/// Source: R. Bristow-Johnson, "Cookbook formulae for audio EQ biquad filter coefficients"
/// (W3C Audio EQ Cookbook), low-pass and high-pass sections with quality factor `q`
/// (q = 1/√2 gives a Butterworth response). State carries across calls, so filtering a signal in
/// blocks of any size gives exactly the same output as filtering it in one piece.
struct Biquad: Sendable {
    private var b0: Float, b1: Float, b2: Float, a1: Float, a2: Float
    private var z1: Float = 0, z2: Float = 0

    enum Kind { case lowPass, highPass }

    /// - Parameters: `cutoffHz` in (0, sampleRate/2), `sampleRate` in Hz, `q` > 0.
    init(_ kind: Kind, cutoffHz: Double, sampleRate: Double, q: Double = 1.0 / 2.0.squareRoot()) {
        precondition(cutoffHz > 0 && cutoffHz < sampleRate / 2, "Biquad cutoff \(cutoffHz) Hz outside (0, fs/2)")
        precondition(q > 0, "Biquad q must be positive")
        let w0 = 2 * Double.pi * cutoffHz / sampleRate
        let cosw = cos(w0), alpha = sin(w0) / (2 * q)
        let a0 = 1 + alpha
        let (n0, n1, n2): (Double, Double, Double)
        switch kind {
        case .lowPass: (n0, n1, n2) = ((1 - cosw) / 2, 1 - cosw, (1 - cosw) / 2)
        case .highPass: (n0, n1, n2) = ((1 + cosw) / 2, -(1 + cosw), (1 + cosw) / 2)
        }
        b0 = Float(n0 / a0); b1 = Float(n1 / a0); b2 = Float(n2 / a0)
        a1 = Float(-2 * cosw / a0); a2 = Float((1 - alpha) / a0)
    }

    /// Filters one sample.
    @inline(__always) mutating func process(_ x: Float) -> Float {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }

    /// Clears the filter memory.
    mutating func reset() { z1 = 0; z2 = 0 }
}
