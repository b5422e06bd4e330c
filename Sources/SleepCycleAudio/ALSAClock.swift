import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The only clock live capture reads: to measure how long a device was gone (the length of a
/// `.missingInput` gap), to estimate frames lost in an overrun when ALSA cannot say, and to pace the
/// reopen back-off. File analysis never reads a clock (docs/architecture.md, "One clock").
///
/// Tests inject `ManualLiveClock`, whose `sleep` advances time instantly (the manual-clock pattern of
/// swift-async-algorithms' test support), so back-off schedules are checked without waiting.
public protocol LiveClock: AnyObject, Sendable {
    /// Seconds on a monotonic clock (arbitrary origin).
    func now() -> Double
    /// Waits `seconds`, returning early once `shouldStop()` is true (checked at least every 50 ms).
    func sleep(seconds: Double, shouldStop: () -> Bool)
}

/// `CLOCK_MONOTONIC`: unaffected by wall-clock changes (NTP steps, DST) during a night.
public final class SystemLiveClock: LiveClock {
    public init() {}

    public func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    public func sleep(seconds: Double, shouldStop: () -> Bool) {
        let deadline = now() + seconds
        while !shouldStop() {
            let left = deadline - now()
            if left <= 0 { return }
            usleep(useconds_t(min(left, 0.05) * 1e6))
        }
    }
}

/// A clock that moves only when told to: `advance(by:)`, or `sleep`, which advances by the requested time
/// at once and records it (`sleeps`) so a test can check a back-off schedule.
public final class ManualLiveClock: LiveClock, @unchecked Sendable {
    private let lock = NSLock()
    private var time: Double
    private var recordedSleeps: [Double] = []

    public init(start: Double = 0) { time = start }

    public func now() -> Double { lock.withLock { time } }

    public func advance(by seconds: Double) { lock.withLock { time += seconds } }

    /// Every `sleep` duration requested so far, in order.
    public var sleeps: [Double] { lock.withLock { recordedSleeps } }

    public func sleep(seconds: Double, shouldStop: () -> Bool) {
        if shouldStop() { return }
        lock.withLock { time += seconds; recordedSleeps.append(seconds) }
    }
}
