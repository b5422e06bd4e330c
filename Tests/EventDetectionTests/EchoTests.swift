import Foundation
import Testing
import SleepCycleBus
@testable import EventDetection

@Suite struct EchoTests {
    /// The definition, one lag at a time (`EchoTracker`'s doc comment): the envelope `env` (oldest first), the
    /// segment's first frame `back` frames before the newest, its copies `direction` periods away.
    static func reference(_ env: [Float], back: Int, span n: Int, direction: Int) -> Float {
        let newest = env.count - 1
        let xStart = newest - back + n - 1    // index in `env` of x[0] (newest frame of the span first)
        func at(_ j: Int, _ lag: Int) -> Float { env[xStart - j - direction * lag] }
        var sx: Float = 0, sxx: Float = 0
        for j in 0..<n { sx += at(j, 0); sxx += at(j, 0) * at(j, 0) }
        let m = Float(n), vx = sxx - sx * sx / m
        guard vx > 1e-6 else { return 0 }
        func r(_ lag: Int) -> Float {
            var sy: Float = 0, syy: Float = 0, sxy: Float = 0
            for j in 0..<n { sy += at(j, lag); syy += at(j, lag) * at(j, lag); sxy += at(j, 0) * at(j, lag) }
            let vy = syy - sy * sy / m
            return vy > 1e-6 ? (sxy - sx * sy / m) / (vx * vy).squareRoot() : 0
        }
        var best: Float = 0
        for lag in EchoTracker.lags {
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

    /// The eight-lags-at-a-time search gives exactly the values of the one-lag-at-a-time definition, both ways, at
    /// every depth the ring allows (after it has wrapped), on a ticking clock in noise and on noise alone.
    @Test func correlationsAreExactlyTheDefinition() {
        for ticking in [true, false] {
            var tracker = EchoTracker()
            var env: [Float] = []
            var last: Float? = nil
            var seeded = UInt64(ticking ? 7 : 11)
            func noise() -> Float {
                seeded = seeded &* 6364136223846793005 &+ 1442695040888963407
                return Float(seeded >> 40) / Float(1 << 24)
            }
            var compared = 0, nonZero = 0
            for t in 0..<1500 {
                let tick: Float = ticking && t % 23 < 2 ? 50 : 0
                let power = (1 + noise() + tick) * 1e-3
                tracker.append(power: power, centre: SampleTime(t * 512))
                let level = 10 * log10f(power + 1e-12)
                env.append(last.map { level - $0 } ?? 0)
                last = level
                guard t > 700, t % 37 == 0 else { continue }
                let window = Array(env.suffix(EchoTracker.capacity))
                for back in stride(from: 0, to: EchoTracker.capacity, by: 13) {
                    let n = min(EchoTracker.span, back + 1)
                    let a = tracker.strength(firstFrameBack: back)
                    let b = n >= EchoTracker.minimumSpan && back + 3 * EchoTracker.lags.upperBound + 3 <= window.count
                        ? Self.reference(window, back: back, span: n, direction: 1) : 0
                    #expect(a == b, "before, back \(back) at frame \(t)")
                    let c = tracker.strength(after: SampleTime((t - back) * 512), hop: 512)
                    let d = n >= EchoTracker.minimumSpan && back - n + 1 >= 3 * EchoTracker.lags.upperBound + 3
                        ? Self.reference(window, back: back, span: n, direction: -1) : 0
                    #expect(c == d, "after, back \(back) at frame \(t)")
                    compared += 2
                    if a > 0 { nonZero += 1 }
                    if c > 0 { nonZero += 1 }
                }
            }
            #expect(compared > 500)
            if ticking { #expect(nonZero > 50) }
        }
    }
}
