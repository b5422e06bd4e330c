/// Analysis windows.
public enum Window {
    /// Periodic ("DFT-even") Hann window of length `n`: `w[i] = 0.5 − 0.5·cos(2πi/n)`, i = 0…n−1.
    ///
    /// Same as `scipy.signal.get_window('hann', n, fftbins=True)`, which librosa's `stft` uses
    /// (librosa 0.11 `filters.get_window`); computed in double precision, stored as Float.
    public static func periodicHann(_ n: Int) -> [Float] {
        (0..<n).map { i in Float(0.5 - 0.5 * _cos(2 * Double.pi * Double(i) / Double(n))) }
    }
}

@inline(__always) func _cos(_ x: Double) -> Double {
    #if canImport(Glibc)
    return Glibc.cos(x)
    #else
    return Darwin.cos(x)
    #endif
}
