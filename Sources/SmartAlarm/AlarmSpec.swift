import Foundation
import SleepCycleBus

/// When to wake the sleeper: the latest alarm time and the window before it in which a smart wake-up may fire.
public struct AlarmSpec: Sendable, Equatable {
    /// Latest moment to fire (stream time).
    public var alarmTime: SampleTime
    /// Length of the window that ends at `alarmTime`.
    public var window: SampleTime
    public var windowStart: SampleTime { alarmTime - window }

    public init(alarmTime: SampleTime, window: SampleTime) {
        self.alarmTime = alarmTime; self.window = window
    }
}
