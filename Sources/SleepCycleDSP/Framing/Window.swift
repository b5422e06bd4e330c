#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Analysis windows.
public enum Window {
    /// Periodic ("DFT-even") Hann window of length `n`: `w[i] = 0.5 − 0.5·cos(2πi/n)`, i = 0…n−1.
    ///
    /// Same as `scipy.signal.get_window('hann', n, fftbins=True)`, which librosa's `stft` uses
    /// (librosa 0.11 `filters.get_window`); computed in double precision, stored as Float.
    public static func periodicHann(_ n: Int) -> [Float] {
        (0..<n).map { i in Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))) }
    }
}
