import Foundation
import Testing
@testable import EventDetection

@Suite struct NoiseFloorTests {
    /// The floor as three scalar loops (smoothing, running minimum, floor), band by band: the definition the
    /// eight-bands-at-a-time update must reproduce exactly.
    struct Reference {
        let bands: Int, alpha: Float, subWindowFrames: Int, subWindows: Int, bias: Float, absoluteFloor: Float
        var smoothed: [Float], currentMin: [Float], pastMin: [Float], floor: [Float]
        var past: [[Float]] = [], ring = 0, framesInSub = 0, started = false

        /// Same parameters as `model` (their derivation from the configuration is not what is tested here).
        init(parametersOf model: MelNoiseFloor) {
            bands = model.bands
            alpha = model.alpha
            subWindowFrames = model.subWindowFrames
            subWindows = model.subWindows
            bias = model.bias
            absoluteFloor = model.absoluteFloor
            smoothed = [Float](repeating: 0, count: bands)
            currentMin = [Float](repeating: .infinity, count: bands)
            pastMin = currentMin
            floor = [Float](repeating: absoluteFloor, count: bands)
        }

        mutating func update(_ power: [Float]) {
            let seed = !started
            started = true
            for b in 0..<bands { smoothed[b] = seed ? power[b] : alpha * smoothed[b] + (1 - alpha) * power[b] }
            for b in 0..<bands { currentMin[b] = min(currentMin[b], smoothed[b]) }
            for b in 0..<bands { floor[b] = max(min(currentMin[b], pastMin[b]) * bias, absoluteFloor) }
            framesInSub += 1
            guard framesInSub == subWindowFrames else { return }
            framesInSub = 0
            if past.count < subWindows { past.append(currentMin) } else { past[ring] = currentMin; ring = (ring + 1) % subWindows }
            for b in 0..<bands { pastMin[b] = past.map { $0[b] }.min()! }
            currentMin = smoothed
        }
    }

    @Test func eightBandsAtATimeIsExactlyTheScalarDefinition() {
        for bands in [40, 13] {       // 13: a remainder after the eight-band steps
            let hop = 512.0 / 16_000
            var floor = MelNoiseFloor(bands: bands, hopSec: hop, configuration: .default)
            var reference = Reference(parametersOf: floor)
            var state: UInt64 = 42
            func next() -> Float {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Float(state >> 40) / Float(1 << 24)
            }
            for t in 0..<3000 {
                // Noise whose level steps up and down (the floor falls and rises), with bursts and zero bands.
                let level: Float = t % 1000 < 500 ? 1e-6 : 1e-4
                let power = (0..<bands).map { b -> Float in
                    if b == 3 && t % 7 == 0 { return 0 }
                    return level * (0.5 + next()) * (t % 97 < 5 ? 100 : 1)
                }
                power.withUnsafeBufferPointer { floor.update($0) }
                reference.update(power)
                let same = floor.withFloor { Array($0) == reference.floor }
                #expect(same, "frame \(t), \(bands) bands")
                if !same { break }
            }
        }
    }
}
