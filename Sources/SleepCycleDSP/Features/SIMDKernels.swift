// Small vector kernels for the per-frame path. Swift does not reassociate floating-point reductions, so the
// loops are written with explicit SIMD8 accumulators (8 lanes, summed at the end) plus a scalar tail.
// Loop indices step with wrapping `&+`: an index never exceeds its count, a buffer length far below
// `Int.max − 8`, so it cannot overflow; a checked `+` would add three instructions to every step.

@inline(__always) func load8(_ p: UnsafePointer<Float>, _ i: Int) -> SIMD8<Float> {
    UnsafeRawPointer(p + i).loadUnaligned(as: SIMD8<Float>.self)
}

@inline(__always) func store8(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>, _ i: Int) {
    UnsafeMutableRawPointer(p + i).storeBytes(of: v, as: SIMD8<Float>.self)
}

/// Σ a[i], i in 0..<n.
@inline(__always) func vsum(_ a: UnsafePointer<Float>, _ n: Int) -> Float {
    var acc = SIMD8<Float>(repeating: 0)
    var i = 0
    while i &+ 8 <= n { acc += load8(a, i); i &+= 8 }
    var s = acc.sum()
    while i < n { s += a[i]; i &+= 1 }
    return s
}

/// Σ a[i]·b[i], i in 0..<n.
@inline(__always) func vdot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ n: Int) -> Float {
    var acc = SIMD8<Float>(repeating: 0)
    var i = 0
    while i &+ 8 <= n { acc += load8(a, i) * load8(b, i); i &+= 8 }
    var s = acc.sum()
    while i < n { s += a[i] * b[i]; i &+= 1 }
    return s
}

/// Lane-wise maximum (the generic `pointwiseMax` is not inlined and runs ~10× slower in the hot loop).
@inline(__always) func vmax(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
    a.replacing(with: b, where: a .< b)
}

/// Vector kernels other modules use (8 lanes; the same code the feature extractor runs).
public enum VectorKernels {
    /// The energy of `count` samples about their mean: Σx² − (Σx)²/n (a hop's power without its DC offset).
    public static func centredEnergy(_ p: UnsafePointer<Float>, count: Int) -> Float {
        guard count > 0 else { return 0 }
        let s = vsum(p, count), q = vdot(p, p, count)
        return max(0, q - s * s / Float(count))
    }

    /// `count` samples scaled to 16-bit integers (×32767, clamped to ±32767, rounded to nearest). The samples are
    /// finite (every source sanitises them: `SampleSanitizer`).
    ///
    /// The rounding adds 1.5·2²³ so that the integer lands in the float's low mantissa bits: a float add and an
    /// integer subtract, which vectorise (Swift's checked Float → Int conversions do not).
    public static func toInt16(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Int16>, count: Int) {
        let magic: Float = 12_582_912
        for i in 0..<count {
            let c = min(32767, max(-32767, src[i] * 32767))
            dst[i] = Int16(truncatingIfNeeded: Int32(bitPattern: (c + magic).bitPattern &- magic.bitPattern))
        }
    }

    /// `count` samples as the 16-bit PCM values they were decoded from: ×32768 (libsndfile's and ALSA's scale for
    /// 16-bit PCM read as float, so k / 32768 gives back exactly k), clamped to −32768…32767, rounded to nearest
    /// (the same magic-number rounding as `toInt16`).
    public static func pcm16(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Int16>, count: Int) {
        let magic: Float = 12_582_912
        for i in 0..<count {
            let c = min(32767, max(-32768, src[i] * 32768))
            dst[i] = Int16(truncatingIfNeeded: Int32(bitPattern: (c + magic).bitPattern &- magic.bitPattern))
        }
    }
}
