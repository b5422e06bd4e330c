// Fast float → ASCII for table output (features CSV/JSON): no String per number, digits written straight
// into a caller's byte buffer.

/// Decimal formatting of Float values with 6 significant digits, like C's `%.6g` with trailing zeros removed.
///
/// * Precision: the printed value is the Float rounded to 6 significant digits, so `|parsed − x| ≤ 5e−6·|x|`
///   (half a unit in the 6th digit; scaled in Double, ties round half up: 6515.625 → `6515.63`, where C's
///   `%g` would round half to even).
/// * Notation: fixed for decimal exponents −5…5 (`0.000123457`, `-12.5`, `123457`), scientific otherwise
///   (`1.5e-07`, `-3.40282e+38`), exponent with sign and at least two digits.
/// * Zero (either sign) prints as `0`. NaN and ±infinity print as `nan`, `inf`, `-inf` in CSV (Python's
///   `float()`, numpy and pandas read them) and as `null` in JSON, which has no such numbers.
enum DecimalFormat {
    /// Longest output: "-1.23457e-38" is 12 bytes; callers reserve this much per number.
    static let maxBytes = 16

    private static let powers: [Double] = (-60...60).map { k in
        var p = 1.0
        for _ in 0..<abs(k) { p *= 10 }          // exact up to 1e22, then correctly-rounded enough (≤ 1e-15 rel)
        return k < 0 ? 1 / p : p
    }
    @inline(__always) private static func pow10(_ k: Int) -> Double { powers[k + 60] }

    /// Writes `x` at `p` and returns the number of bytes written (≤ `maxBytes`).
    @inline(__always)
    static func write(_ x: Float, json: Bool, to p: UnsafeMutablePointer<UInt8>) -> Int {
        if !x.isFinite {
            if json { return copy("null", p) }
            return x.isNaN ? copy("nan", p) : (x < 0 ? copy("-inf", p) : copy("inf", p))
        }
        if x == 0 { p[0] = UInt8(ascii: "0"); return 1 }
        var n = 0
        if x < 0 { p[0] = UInt8(ascii: "-"); n = 1 }
        let a = Double(x.magnitude)
        // floor(log10 a) is floor(e2·log10 2) or one more.
        var e = (Int(a.exponent) * 78913) >> 18
        if a >= pow10(e + 1) { e += 1 }
        var m = Int(a * pow10(5 - e) + 0.5)      // round half up; a·10^(5−e) is in [1e5, 1e6]
        if m >= 1_000_000 { m = 100_000; e += 1 }
        if m < 100_000 { m = 100_000 }            // unreachable but keeps the digit count fixed
        // Six digits, most significant first; drop trailing zeros.
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0)
        var count = 6
        withUnsafeMutableBytes(of: &digits) { d in
            var v = m
            for i in stride(from: 5, through: 0, by: -1) { d[i] = UInt8(v % 10); v /= 10 }
            while count > 1 && d[count - 1] == 0 { count -= 1 }
        }
        return withUnsafeBytes(of: &digits) { d in
            let zero = UInt8(ascii: "0")
            if e >= -5 && e <= 5 {
                if e >= 0 {
                    for i in 0...e { p[n] = i < count ? zero + d[i] : zero; n += 1 }
                    if count > e + 1 {
                        p[n] = UInt8(ascii: "."); n += 1
                        for i in (e + 1)..<count { p[n] = zero + d[i]; n += 1 }
                    }
                } else {
                    p[n] = zero; p[n + 1] = UInt8(ascii: "."); n += 2
                    for _ in 0..<(-e - 1) { p[n] = zero; n += 1 }
                    for i in 0..<count { p[n] = zero + d[i]; n += 1 }
                }
            } else {
                p[n] = zero + d[0]; n += 1
                if count > 1 {
                    p[n] = UInt8(ascii: "."); n += 1
                    for i in 1..<count { p[n] = zero + d[i]; n += 1 }
                }
                p[n] = UInt8(ascii: "e"); p[n + 1] = e < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"); n += 2
                let ae = abs(e)
                if ae >= 100 { p[n] = zero + UInt8(ae / 100); n += 1 }
                p[n] = zero + UInt8(ae / 10 % 10); p[n + 1] = zero + UInt8(ae % 10); n += 2
            }
            return n
        }
    }

    /// Writes `samples / 16000` seconds exactly (`samples · 625 / 10⁷`, at most 7 decimals, trailing zeros
    /// removed), e.g. 8000 → `0.5`, 1 → `0.0000625`. Other rates fall back to `write(Float)`.
    @inline(__always)
    static func writeSeconds(samples: Int64, sampleRate: Int, to p: UnsafeMutablePointer<UInt8>) -> Int {
        guard sampleRate > 0, 10_000_000 % sampleRate == 0 else {
            return write(Float(Double(samples) / Double(max(sampleRate, 1))), json: false, to: p)
        }
        var n = 0
        var units = samples * Int64(10_000_000 / sampleRate)     // 1e-7 s
        if units < 0 { p[0] = UInt8(ascii: "-"); n = 1; units = -units }
        n += writeInteger(units / 10_000_000, to: p + n)
        var frac = units % 10_000_000
        if frac != 0 {
            p[n] = UInt8(ascii: "."); n += 1
            var width = 7
            while frac % 10 == 0 { frac /= 10; width -= 1 }
            for i in stride(from: width - 1, through: 0, by: -1) { p[n + i] = UInt8(ascii: "0") + UInt8(frac % 10); frac /= 10 }
            n += width
        }
        return n
    }

    /// Decimal digits of a non-negative integer.
    @inline(__always)
    static func writeInteger(_ v: Int64, to p: UnsafeMutablePointer<UInt8>) -> Int {
        var v = v, len = 1, t = v
        while t >= 10 { t /= 10; len += 1 }
        for i in stride(from: len - 1, through: 0, by: -1) { p[i] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10 }
        return len
    }

    @inline(__always) private static func copy(_ s: StaticString, _ p: UnsafeMutablePointer<UInt8>) -> Int {
        let n = s.utf8CodeUnitCount
        p.update(from: s.utf8Start, count: n)
        return n
    }
}
