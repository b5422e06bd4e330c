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

    /// Zeroth-order modified Bessel function of the first kind, by the polynomial approximations of
    /// Abramowitz & Stegun 9.8.1 (|x| ≤ 3.75, |ε| < 1.6e-7) and 9.8.2 (x > 3.75, relative |ε| < 1.9e-7) — ample for
    /// filters specified to ~90 dB, and cheap enough to evaluate for every tap of large phase tables.
    public static func besselI0(_ x: Double) -> Double {
        let ax = abs(x)
        if ax <= 3.75 {
            let t = (x / 3.75) * (x / 3.75)
            return 1 + t * (3.5156229 + t * (3.0899424 + t * (1.2067492 + t * (0.2659732 + t * (0.0360768
                + t * 0.0045813)))))
        }
        let t = 3.75 / ax
        let poly = 0.39894228 + t * (0.01328592 + t * (0.00225319 + t * (-0.00157565 + t * (0.00916281
            + t * (-0.02057706 + t * (0.02635537 + t * (-0.01647633 + t * 0.00392377)))))))
        return exp(ax) / ax.squareRoot() * poly
    }
}
