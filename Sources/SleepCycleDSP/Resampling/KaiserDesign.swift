// Kaiser-window design formulas for the resampler's windowed-sinc prototype filter.
import Foundation

/// Kaiser window design (J. F. Kaiser, "Nonrecursive digital filter design using the I0-sinh window function",
/// Proc. IEEE ISCAS 1974; formulas as given in Oppenheim & Schafer, *Discrete-Time Signal Processing*, 3rd ed.,
/// §7.6.1, eqs. 7.62–7.63).
public enum KaiserDesign {
    /// The window shape parameter β for a stop-band attenuation of `attenuationDB` (Oppenheim & Schafer eq. 7.62).
    public static func beta(attenuationDB a: Double) -> Double {
        if a > 50 { return 0.1102 * (a - 8.7) }
        if a >= 21 { return 0.5842 * pow(a - 21, 0.4) + 0.07886 * (a - 21) }
        return 0
    }

    /// Filter length M (order; taps = M + 1) for attenuation `attenuationDB` and a transition width
    /// `transitionCyclesPerSample` (Δf / fs) (Oppenheim & Schafer eq. 7.63: M = (A − 8) / (2.285 Δω)).
    public static func order(attenuationDB a: Double, transitionCyclesPerSample df: Double) -> Double {
        (a - 8) / (2.285 * 2 * Double.pi * df)
    }

    /// The Kaiser window w(u) = I0(β √(1 − u²)) / I0(β) at a normalised position u ∈ [−1, 1] (0 outside).
    public static func window(_ u: Double, beta: Double) -> Double {
        if abs(u) > 1 { return 0 }
        return besselI0(beta * (1 - u * u).squareRoot()) / besselI0(beta)
    }

    /// Zeroth-order modified Bessel function of the first kind, by its power series
    /// I0(x) = Σ ((x/2)^k / k!)² (Abramowitz & Stegun 9.6.12), summed until the terms are below 1e-17 relative.
    public static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0
        let half = x / 2
        var k = 1.0
        while true {
            term *= (half / k) * (half / k)
            sum += term
            if term < sum * 1e-17 { break }
            k += 1
        }
        return sum
    }
}
