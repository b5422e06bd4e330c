import Foundation

/// Machines repeat themselves exactly — a ticking clock, a dripping tap, a charger's chirp —, a sleeper does not:
/// a cough, a word or a rustle is not a copy of the sound one or two seconds before it, and snores repeat at the
/// breathing period (3–6 s, drifting from breath to breath).
///
/// Per frame, the change of the channel's log total mel power from the frame before (dB: an onset envelope, so slow
/// swells such as breathing count for little), for the last `capacity` frames (10.2 s at 32 ms), in a ring. At a
/// segment's close, `strength(firstFrameBack:)` compares the envelope of the segment's first second (at least
/// 0.25 s, into the frames after it if it is shorter) with the same stretch one, two and three beat periods earlier,
/// for periods `lags` (0.32–2.0 s): Pearson correlation r₁ at the period, r₂ and r₃ the best of the frame lags
/// within ±1 and ±2 frames of twice and three times it (a period is rarely a whole number of frames), and returns
/// the best `min(r₁, r₂, r₃)` — three copies before it, so a burst of three like coughs is never a machine. The
/// next tick of a clock scores about 0.4–0.9 whichever part of the tick opened the segment; the evaluation nights'
/// coughs, words, snores and rustles reach 0.55 in at most 0.4 % of segments (docs/0005).
///
/// `enum State`: the ring (fixed size), its write position and the last frame's log power; `line` is reused
/// scratch (no allocation per frame or per segment).
struct EchoTracker: Sendable {
    static let capacity = 320
    static let lags = 10...62
    static let span = 32, minimumSpan = 8
    private var ring = [Float](repeating: 0, count: capacity)
    private var position = 0
    private var filled = 0
    private var lastLevel: Float? = nil
    private var line = [Float](repeating: 0, count: capacity)

    /// A frame's total (mel) power.
    mutating func append(power: Float) {
        let level = 10 * log10f(power + 1e-12)
        ring[position] = lastLevel.map { level - $0 } ?? 0
        lastLevel = level
        position = position + 1 == Self.capacity ? 0 : position + 1
        filled = min(filled + 1, Self.capacity)
    }

    mutating func reset() { position = 0; filled = 0; lastLevel = nil }

    /// The echo strength of a segment whose first frame is `back` frames before the newest one (0 = the newest).
    mutating func strength(firstFrameBack back: Int) -> Float {
        let n = min(Self.span, back + 1)
        let depth = back + 3 * Self.lags.upperBound + 3
        guard n >= Self.minimumSpan, depth <= filled else { return 0 }
        // `line[k]` = the envelope `k` frames before the newest frame.
        for k in 0..<depth { line[k] = ring[(position - 1 - k + 2 * Self.capacity) % Self.capacity] }
        return line.withUnsafeBufferPointer { e in
            let x = e.baseAddress! + (back - n + 1)      // the segment's span, newest frame first
            var sx: Float = 0, sxx: Float = 0
            for j in 0..<n { sx += x[j]; sxx += x[j] * x[j] }
            let m = Float(n), vx = sxx - sx * sx / m
            guard vx > 1e-6 else { return 0 }
            func r(_ lag: Int) -> Float {
                let y = x + lag
                var sy: Float = 0, syy: Float = 0, sxy: Float = 0
                for j in 0..<n { sy += y[j]; syy += y[j] * y[j]; sxy += x[j] * y[j] }
                let vy = syy - sy * sy / m
                return vy > 1e-6 ? (sxy - sx * sy / m) / (vx * vy).squareRoot() : 0
            }
            var best: Float = 0
            for lag in Self.lags {
                let one = r(lag)
                guard one > best else { continue }
                let two = max(r(2 * lag - 1), r(2 * lag), r(2 * lag + 1))
                guard two > best else { continue }
                var three: Float = -1
                for d in -2...2 { three = max(three, r(3 * lag + d)) }
                best = max(best, min(one, two, three))
            }
            return best
        }
    }
}
