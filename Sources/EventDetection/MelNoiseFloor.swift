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

    private(set) var smoothed: [Float]
    /// Current floor estimate per band (linear mel power).
    private(set) var floor: [Float]
    private var currentMin: [Float]
    private var pastMins: [[Float]]      // ring of the last `subWindows` completed sub-window minima
    private var pastMin: [Float]         // their element-wise minimum (recomputed once per sub-window)
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
        smoothed = [Float](repeating: 0, count: bands)
        floor = [Float](repeating: c.absoluteFloorPower, count: bands)
        currentMin = [Float](repeating: .infinity, count: bands)
        pastMins = []
        pastMin = [Float](repeating: .infinity, count: bands)
    }

    /// Feeds one frame's mel powers (`power[0..<bands]`); updates `floor`.
    mutating func update(_ power: UnsafeBufferPointer<Float>) {
        if !started {
            for b in 0..<bands { smoothed[b] = power[b] }
            started = true
        } else {
            for b in 0..<bands { smoothed[b] = alpha * smoothed[b] + (1 - alpha) * power[b] }
        }
        for b in 0..<bands where smoothed[b] < currentMin[b] { currentMin[b] = smoothed[b] }
        framesInSub += 1
        for b in 0..<bands { floor[b] = max(min(currentMin[b], pastMin[b]) * bias, absoluteFloor) }
        if framesInSub == subWindowFrames {
            if pastMins.count < subWindows {
                pastMins.append(currentMin)
            } else {
                pastMins[ringIndex] = currentMin
                ringIndex = (ringIndex + 1) % subWindows
            }
            for b in 0..<bands {
                var m = Float.infinity
                for past in pastMins where past[b] < m { m = past[b] }
                pastMin[b] = m
            }
            // The new sub-window starts from the current smoothed value so the floor can rise when noise rises.
            for b in 0..<bands { currentMin[b] = smoothed[b] }
            framesInSub = 0
        }
    }

    mutating func reset() {
        self = MelNoiseFloor(bands: bands, alpha: alpha, subWindowFrames: subWindowFrames, subWindows: subWindows,
                             bias: bias, absoluteFloor: absoluteFloor)
    }

    private init(bands: Int, alpha: Float, subWindowFrames: Int, subWindows: Int, bias: Float, absoluteFloor: Float) {
        self.bands = bands; self.alpha = alpha; self.subWindowFrames = subWindowFrames
        self.subWindows = subWindows; self.bias = bias; self.absoluteFloor = absoluteFloor
        smoothed = [Float](repeating: 0, count: bands)
        floor = [Float](repeating: absoluteFloor, count: bands)
        currentMin = [Float](repeating: .infinity, count: bands)
        pastMins = []
        pastMin = [Float](repeating: .infinity, count: bands)
    }
}
