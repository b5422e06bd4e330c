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
