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

    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses `--alarm HH:MM` and `--alarm-window` values.
    ///
    /// `time` is a 24-hour clock time `H:MM` or `HH:MM` in `timeZone` (default UTC); the alarm is its first
    /// occurrence strictly after `start` (the wall-clock time of the session's first sample). `window` is a
    /// duration: `30m`, `45min`, `1h`, `1h30m`, `90s`, or a bare number of minutes; nil means 30 minutes. The
    /// window must be positive and at most 12 hours.
    public static func parse(time: String, window: String?, start: Date,
                             timeZone: TimeZone = TimeZone(identifier: "UTC")!) throws -> AlarmSpec {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              let hour = Int(parts[0]), let minute = Int(parts[1]), (0..<24).contains(hour), (0..<60).contains(minute)
        else { throw ParseError(description: "--alarm '\(time)': expected a 24-hour time HH:MM, e.g. 06:45") }
        let windowSeconds = try window.map(parseDuration) ?? 1800
        guard windowSeconds > 0, windowSeconds <= 12 * 3600 else {
            throw ParseError(description: "--alarm-window '\(window ?? "")': must be between 1 s and 12 h")
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let date = calendar.nextDate(after: start, matching: DateComponents(hour: hour, minute: minute, second: 0),
                                           matchingPolicy: .nextTime) else {
            throw ParseError(description: "--alarm '\(time)': no such time after the session start")
        }
        return AlarmSpec(alarmTime: AnalysisClock.samples(seconds: date.timeIntervalSince(start)),
                         window: AnalysisClock.samples(seconds: windowSeconds))
    }

    /// `1h30m`, `30m`, `45min`, `90s`, `2h`, or a bare number (minutes) → seconds.
    static func parseDuration(_ text: String) throws -> Double {
        let s = text.trimmingCharacters(in: .whitespaces).lowercased()
        let bad = ParseError(description: "--alarm-window '\(text)': expected a duration such as 30m, 1h, 1h30m or 90s")
        if let minutes = Double(s) {
            guard minutes.isFinite else { throw bad }
            return minutes * 60
        }
        var total = 0.0, number = "", i = s.startIndex, sawUnit = false
        while i < s.endIndex {
            let c = s[i]
            if c.isNumber || c == "." { number.append(c); i = s.index(after: i); continue }
            var unit = ""
            while i < s.endIndex, s[i].isLetter { unit.append(s[i]); i = s.index(after: i) }
            guard let value = Double(number) else { throw bad }
            switch unit {
            case "h", "hr", "hours", "hour": total += value * 3600
            case "m", "min", "mins", "minute", "minutes": total += value * 60
            case "s", "sec", "secs", "seconds", "second": total += value
            default: throw bad
            }
            number = ""; sawUnit = true
        }
        guard sawUnit, number.isEmpty else { throw bad }
        return total
    }
}
