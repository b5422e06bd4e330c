import Foundation
import SleepCycleBus

/// Machines repeat themselves exactly — a ticking clock, a dripping tap, a charger's chirp —, a sleeper does not:
/// a cough, a word or a rustle is not a copy of the sound one or two seconds before it, and snores repeat at the
/// breathing period (3–6 s, drifting from breath to breath).
///
/// Per frame, the change of the channel's log total mel power from the frame before (dB: an onset envelope, so slow
/// swells such as breathing count for little), for the last `capacity` frames (20.5 s at 32 ms), in a ring. At a
/// segment's close, `strength(firstFrameBack:)` compares the envelope of the segment's first second (at least
/// 0.25 s, into the frames after it if it is shorter) with the same stretch one, two and three beat periods earlier,
/// for periods `lags` (0.32–2.0 s): Pearson correlation r₁ at the period, r₂ and r₃ the best of the frame lags
/// within ±1 and ±2 frames of twice and three times it (a period is rarely a whole number of frames), and returns
/// the best `min(r₁, r₂, r₃)` — three copies before it, so a burst of three like coughs is never a machine. The
/// next tick of a clock scores about 0.4–0.9 whichever part of the tick opened the segment; the evaluation nights'
/// coughs, words, snores and rustles reach 0.55 in at most 0.4 % of segments (docs/0005). When the context stage
/// decides the segment (≥ 10 s after it ends), `strength(after:)` does the same with the three periods after it:
/// a clock's first ticks have no past to echo, but a future.
///
/// `enum State`: the ring (fixed size), its write position, the last frame's log power and the newest frame's
/// centre; `line` is reused scratch (no allocation per frame or per segment).
struct EchoTracker: Sendable {
    /// 20.5 s at 32 ms: a segment (≤ 5 s) and the context stage's 10-s look-ahead after it, for `strength(after:)`.
    static let capacity = 640
    static let lags = 10...62
    static let span = 32, minimumSpan = 8
    private var ring = [Float](repeating: 0, count: capacity)
    private var position = 0
    private var filled = 0
    private var lastLevel: Float? = nil
    /// The newest frame's centre (for `strength(after:)`).
    private var newestCentre: SampleTime = 0
    private var line = [Float](repeating: 0, count: capacity)

    /// A frame's total (mel) power, centred at `centre`.
    mutating func append(power: Float, centre: SampleTime) {
        let level = 10 * log10f(power + 1e-12)
        ring[position] = lastLevel.map { level - $0 } ?? 0
        lastLevel = level
        position = position + 1 == Self.capacity ? 0 : position + 1
        filled = min(filled + 1, Self.capacity)
        newestCentre = centre
    }

    mutating func reset() { position = 0; filled = 0; lastLevel = nil }

    /// The echo strength of a segment whose first frame is `back` frames before the newest one (0 = the newest),
    /// from the three beat periods before it.
    mutating func strength(firstFrameBack back: Int) -> Float {
        let n = min(Self.span, back + 1)
        guard n >= Self.minimumSpan, back + 3 * Self.lags.upperBound + 3 <= filled else { return 0 }
        return correlate(firstFrameBack: back, span: n, direction: 1)
    }

    /// The same from the three beat periods after the segment, once they have been heard: `firstCentre` is the
    /// centre of the segment's first frame, frames are `hop` samples apart. 0 while the ring does not reach back to
    /// it or forward enough past it.
    mutating func strength(after firstCentre: SampleTime, hop: Int) -> Float {
        guard firstCentre <= newestCentre, hop > 0 else { return 0 }
        let back = Int((newestCentre - firstCentre + SampleTime(hop / 2)) / SampleTime(hop))
        let n = min(Self.span, back + 1)
        guard n >= Self.minimumSpan, back < filled, back - n + 1 >= 3 * Self.lags.upperBound + 3 else { return 0 }
        return correlate(firstFrameBack: back, span: n, direction: -1)
    }

    /// The best `min(r₁, r₂, r₃)` over the periods, the copies `direction` (1: earlier, −1: later) periods away.
    private mutating func correlate(firstFrameBack back: Int, span n: Int, direction: Int) -> Float {
        let depth = direction > 0 ? back + 3 * Self.lags.upperBound + 3 : back + 1
        // `line[k]` = the envelope `k` frames before the newest frame.
        for k in 0..<depth { line[k] = ring[(position - 1 - k + 2 * Self.capacity) % Self.capacity] }
        return line.withUnsafeBufferPointer { e in
            let x = e.baseAddress! + (back - n + 1)      // the segment's span, newest frame first
            var sx: Float = 0, sxx: Float = 0
            for j in 0..<n { sx += x[j]; sxx += x[j] * x[j] }
            let m = Float(n), vx = sxx - sx * sx / m
            guard vx > 1e-6 else { return 0 }
            func r(_ lag: Int) -> Float {
                let y = x + direction * lag
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
