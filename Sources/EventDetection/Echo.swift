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
/// centre; `line` and `correlations` are reused scratch (no allocation per frame or per segment).
struct EchoTracker: Sendable {
    /// 20.5 s at 32 ms: a segment (2 s by default; 5 s still fits) and the context stage's 10-s look-ahead after it,
    /// for `strength(after:)`.
    static let capacity = 640
    static let lags = 10...62
    static let span = 32, minimumSpan = 8
    private var ring = [Float](repeating: 0, count: capacity)
    private var position = 0
    private var filled = 0
    private var lastLevel: Float? = nil
    /// The newest frame's centre (for `strength(after:)`).
    private var newestCentre: SampleTime = 0
    /// The highest lag the search reads (three times the longest period, plus two frames).
    static let highestLag = 3 * lags.upperBound + 2
    /// `line` has this many spare values on either side: the eight-lag passes read up to seven frames past the
    /// lags they keep.
    static let pad = 8
    private var line = [Float](repeating: 0, count: pad + capacity + pad)
    /// `correlations[lag]`: the segment's correlation with its copy `lag` frames away (scratch of `correlate`).
    private var correlations = [Float](repeating: 0, count: highestLag + 1)

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
    ///
    /// Every correlation the search can ask for (lags 10 … 3·62 + 2) is computed first, eight lags side by side (one
    /// SIMD lane per lag, each summing its own products in frame order: the same values as one lag at a time), then
    /// the search reads them; the envelope is unrolled into `line` without a division per frame.
    private mutating func correlate(firstFrameBack back: Int, span n: Int, direction: Int) -> Float {
        let depth = direction > 0 ? back + 3 * Self.lags.upperBound + 3 : back + 1
        let pad = Self.pad
        // `line[pad + k]` = the envelope `k` frames before the newest frame.
        ring.withUnsafeBufferPointer { ring in
            line.withUnsafeMutableBufferPointer { line in
                var i = position == 0 ? Self.capacity - 1 : position - 1
                for k in 0..<depth {
                    line[pad + k] = ring[i]
                    i = i == 0 ? Self.capacity - 1 : i - 1
                }
            }
        }
        let lowest = Self.lags.lowerBound, highest = Self.highestLag
        return line.withUnsafeBufferPointer { e in
            let x = e.baseAddress! + pad + (back - n + 1)      // the segment's span, newest frame first
            var sx: Float = 0, sxx: Float = 0
            for j in 0..<n { sx += x[j]; sxx += x[j] * x[j] }
            let m = Float(n), vx = sxx - sx * sx / m
            guard vx > 1e-6 else { return 0 }
            return correlations.withUnsafeMutableBufferPointer { rAt in
                // Lanes: lags `first … first + 7`; read ascending in memory, so lane L is lag first + L when the
                // copies are earlier (further into `line`) and lag first + 7 − L when they are later. Lanes past
                // `highest` read the padding and are not kept.
                var first = lowest
                while first <= highest {
                    let y0 = direction > 0 ? x + first : x - (first + 7)
                    var sy = SIMD8<Float>(repeating: 0), syy = sy, sxy = sy
                    for j in 0..<n {
                        let y = UnsafeRawPointer(y0 + j).loadUnaligned(as: SIMD8<Float>.self)
                        sy += y; syy += y * y; sxy += SIMD8(repeating: x[j]) * y
                    }
                    let vy = syy - sy * sy / m
                    let r = (sxy - SIMD8(repeating: sx) * sy / m) / (SIMD8(repeating: vx) * vy).squareRoot()
                    for lane in 0..<8 {
                        let lag = direction > 0 ? first + lane : first + 7 - lane
                        if lag <= highest { rAt[lag] = vy[lane] > 1e-6 ? r[lane] : 0 }
                    }
                    first += 8
                }
                var best: Float = 0
                for lag in Self.lags {
                    let one = rAt[lag]
                    guard one > best else { continue }
                    let two = max(rAt[2 * lag - 1], rAt[2 * lag], rAt[2 * lag + 1])
                    guard two > best else { continue }
                    var three: Float = -1
                    for d in -2...2 { three = max(three, rAt[3 * lag + d]) }
                    best = max(best, min(one, two, three))
                }
                return best
            }
        }
    }
}
