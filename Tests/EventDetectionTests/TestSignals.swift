import Foundation
import SleepCycleBus
import SleepCycleDSP
@testable import EventDetection

/// Deterministic synthetic feature streams: only the 40 mel columns are filled (all the detector reads).
enum TestSignals {
    static let hop = 512
    static let framesPerSec = 16000.0 / 512.0

    /// Deterministic pseudo-random numbers in [0, 1) (64-bit LCG, Knuth MMIX constants).
    struct LCG {
        var state: UInt64
        mutating func next() -> Float {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(state >> 40) / Float(1 << 24)
        }
    }

    /// A flat-ish background spectrum (power per mel band) at `level`.
    static func background(_ level: Float) -> [Float] {
        (0..<40).map { level * (1 + 0.5 * Float(40 - $0) / 40) }
    }

    /// A "snorer": a spectral envelope with resonances at `peaks` (band indices).
    static func snorerShape(peaks: [Int], level: Float, base: Float = 0.02) -> [Float] {
        (0..<40).map { b in
            var v: Float = base
            for p in peaks { v += exp(-Float((b - p) * (b - p)) / 6) }
            return level * v
        }
    }

    /// Frames of mel rows: background with multiplicative jitter (±20 %) plus `events` (start s, end s, shape).
    static func frames(seconds: Double, background bg: [Float], events: [(Double, Double, [Float])],
                       seed: UInt64 = 1) -> [[Float]] {
        var rng = LCG(state: seed)
        let n = Int(seconds * framesPerSec)
        return (0..<n).map { i in
            let t = Double(i) / framesPerSec
            var row = bg.map { $0 * (0.8 + 0.4 * rng.next()) }
            for (a, b, shape) in events where t >= a && t < b {
                for k in 0..<40 { row[k] += shape[k] * (0.9 + 0.2 * rng.next()) }
            }
            return row
        }
    }

    /// Feature blocks of `blockFrames` frames each, frame i centred at i·hop.
    static func blocks(_ rows: [[Float]], blockFrames: Int = 100, channel: Int = 0) -> [FeatureBlock] {
        stride(from: 0, to: rows.count, by: blockFrames).map { s in
            let e = min(rows.count, s + blockFrames)
            var values = [Float](repeating: 0, count: (e - s) * FeatureLayout.stride)
            for i in s..<e {
                for k in 0..<40 { values[(i - s) * FeatureLayout.stride + FeatureLayout.mel + k] = rows[i][k] }
            }
            return FeatureBlock(channel: channel, start: Int64(s * hop), frameLength: 1024, hopLength: hop,
                                count: e - s, values: values)
        }
    }

    static func segments(_ rows: [[Float]], configuration: DetectorConfiguration = .default) throws -> [CandidateSegment] {
        var x = try SegmentExtractor(configuration: configuration)
        var out: [CandidateSegment] = []
        for b in blocks(rows) { out += x.process(b) }
        return out + x.flush()
    }
}

/// A classifier stand-in for tests of the event logic: a fixed answer per segment duration range.
struct FixedClassifier: SegmentClassifier {
    var answer: @Sendable (SegmentFeatures) -> ClassProbabilities
    func classify(_ features: SegmentFeatures) -> ClassProbabilities { answer(features) }
    static func always(_ type: EventType?, _ p: Double) -> FixedClassifier {
        FixedClassifier { _ in
            var v = [Double](repeating: (1 - p) / 4, count: 5)
            v[type.map { ClassProbabilities.index(of: $0) } ?? 0] = p
            return ClassProbabilities(values: v)
        }
    }
}
