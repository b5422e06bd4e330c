import Foundation
import SleepCycleDSP

/// Adaptive noise floor per mel band by minimum statistics.
///
/// Source: R. Martin, "Noise power spectral density estimation based on optimal smoothing and minimum
/// statistics", IEEE Trans. Speech Audio Process. 9(5), 2001 — simplified: fixed first-order smoothing
/// (time constant `floorSmoothingSec`) instead of Martin's optimal smoothing, the minimum over `U` sub-windows
/// of `V` frames (his sub-window scheme), and a constant bias factor. Stationary and slowly changing noise
/// (fans, air conditioning, rain, traffic) is absorbed within `U × V` frames; events shorter than the window
/// (snores, words, coughs) stay above it because quiet between them resets the minimum.
///
/// State is O(bands × U): bounded whatever the recording length.
struct MelNoiseFloor: Sendable {
    let bands: Int
    let alpha: Float
    let subWindowFrames: Int
    let subWindows: Int
    let bias: Float
    let absoluteFloor: Float

    /// Per-band state in one buffer (one access per frame): `bands` values each of the smoothed power, the
    /// current sub-window's minimum, the minimum of the past sub-windows (recomputed once per sub-window), and the
    /// floor (linear mel power).
    private var state: [Float]
    private var pastMins: [[Float]]      // ring of the last `subWindows` completed sub-window minima
    private var ringIndex = 0
    private var framesInSub = 0
    private(set) var started = false

    init(bands: Int, hopSec: Double, configuration c: DetectorConfiguration) {
        self.bands = bands
        alpha = Float(exp(-hopSec / c.floorSmoothingSec))
        subWindowFrames = max(1, Int((c.floorSubWindowSec / hopSec).rounded()))
        subWindows = c.floorSubWindows
        bias = c.floorBias
        absoluteFloor = c.absoluteFloorPower
        state = Self.initialState(bands: bands, absoluteFloor: c.absoluteFloorPower)
        pastMins = []
    }

    private static func initialState(bands: Int, absoluteFloor: Float) -> [Float] {
        [Float](repeating: 0, count: bands) + [Float](repeating: .infinity, count: 2 * bands)
            + [Float](repeating: absoluteFloor, count: bands)
    }

    /// Calls `body` with the current floor. `mutating` (it changes nothing) so that a caller holding the floor in
    /// a stored property lends it in place: a non-mutating call copied the whole floor (and retained its buffers)
    /// on every frame.
    mutating func withFloor<R>(_ body: (UnsafeBufferPointer<Float>) -> R) -> R {
        let n = bands
        return state.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[(3 * n)...])) }
    }

    /// Feeds one frame's mel powers (`power[0..<bands]`); updates the floor (read it with `withFloor`).
    ///
    /// One pass over the bands through a raw buffer (no bounds or uniqueness checks per element), eight bands at a
    /// time: every band's arithmetic is the same as smoothing, minimum and floor written as three scalar loops
    /// (`min`/`max` as the standard library's, `y < x ? y : x` and `y >= x ? y : x`; tested against them).
    mutating func update(_ power: UnsafeBufferPointer<Float>) {
        let n = bands, a = alpha, oneMinusAlpha = 1 - alpha, bias = bias, absoluteFloor = absoluteFloor
        let seed = !started
        started = true
        framesInSub += 1
        let subWindowDone = framesInSub == subWindowFrames
        if subWindowDone { framesInSub = 0 }
        state.withUnsafeMutableBufferPointer { state in
            let sm = state.baseAddress!, cm = sm + n, pm = sm + 2 * n, fl = sm + 3 * n
            let p = power.baseAddress!
            typealias V = SIMD8<Float>
            func load(_ x: UnsafePointer<Float>) -> V { UnsafeRawPointer(x).loadUnaligned(as: V.self) }
            func store(_ v: V, _ x: UnsafeMutablePointer<Float>) { UnsafeMutableRawPointer(x).storeBytes(of: v, as: V.self) }
            let va = V(repeating: a), vOneMinusAlpha = V(repeating: oneMinusAlpha)
            let vBias = V(repeating: bias), vAbsolute = V(repeating: absoluteFloor)
            var b = 0
            while b + 8 <= n {
                let s = seed ? load(p + b) : va * load(sm + b) + vOneMinusAlpha * load(p + b)
                store(s, sm + b)
                let current = load(cm + b)
                let m = current.replacing(with: s, where: s .< current)
                store(m, cm + b)
                let past = load(pm + b)
                let scaled = m.replacing(with: past, where: past .< m) * vBias
                store(scaled.replacing(with: vAbsolute, where: vAbsolute .>= scaled), fl + b)
                b += 8
            }
            for b in b..<n {
                let s = seed ? power[b] : a * sm[b] + oneMinusAlpha * power[b]
                sm[b] = s
                let m = s < cm[b] ? s : cm[b]
                cm[b] = m
                fl[b] = max(min(m, pm[b]) * bias, absoluteFloor)
            }
            guard subWindowDone else { return }
            let currentMin = Array(UnsafeBufferPointer(start: cm, count: n))
            if pastMins.count < subWindows {
                pastMins.append(currentMin)
            } else {
                pastMins[ringIndex] = currentMin
                ringIndex = (ringIndex + 1) % subWindows
            }
            for b in 0..<n {
                var m = Float.infinity
                for past in pastMins where past[b] < m { m = past[b] }
                pm[b] = m
            }
            // The new sub-window starts from the current smoothed value so the floor can rise when noise rises.
            for b in 0..<n { cm[b] = sm[b] }
        }
    }

    mutating func reset() {
        self = MelNoiseFloor(bands: bands, alpha: alpha, subWindowFrames: subWindowFrames, subWindows: subWindows,
                             bias: bias, absoluteFloor: absoluteFloor)
    }

    private init(bands: Int, alpha: Float, subWindowFrames: Int, subWindows: Int, bias: Float, absoluteFloor: Float) {
        self.bands = bands; self.alpha = alpha; self.subWindowFrames = subWindowFrames
        self.subWindows = subWindows; self.bias = bias; self.absoluteFloor = absoluteFloor
        state = Self.initialState(bands: bands, absoluteFloor: absoluteFloor)
        pastMins = []
    }
}
