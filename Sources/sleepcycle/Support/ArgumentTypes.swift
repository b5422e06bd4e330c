import ArgumentParser
import Foundation
import SleepCycle
import SleepCycleFormats

/// Option values that parse themselves: one function per kind of value, used by every command as an
/// `@Option(transform:)`, so the error line says what is wrong with the value ("month 13 is out of range …").
enum OptionValue {
    /// `--start`: an ISO 8601 time with its UTC offset, from 1970 to the end of 8999 in UTC (so that every time of the night,
    /// its end and its wearable readings still print as four-digit ISO 8601 years).
    static func startTime(_ text: String) throws -> ISO8601Time {
        let time = try ISO8601Time.parse(text)
        guard time.date >= Date(timeIntervalSince1970: 0), time.date < Self.latestStart else {
            throw Problem("\(MessageText.field(text)) is out of range (a time from 1970 to the end of 8999, UTC)")
        }
        return time
    }
    static let latestStart = Date(timeIntervalSince1970: 221_845_392_000)   // 9000-01-01T00:00:00Z

    /// `--alarm`: a 24-hour clock time `HH:MM`, read in the recording's offset.
    static func clockTime(_ text: String) throws -> ClockTime {
        guard let t = ClockTime(text) else { throw Problem("expected a 24-hour time HH:MM, e.g. 06:45") }
        return t
    }

    /// `--alarm-window`: a duration from 1 s to 12 h (`30m`, `1h30m`, `90s`; a bare number is minutes).
    static func alarmWindow(_ text: String) throws -> Double {
        try DurationText.parse(text, bareUnit: .minutes, range: 1...(12 * 3600)).seconds
    }

    /// `--pace`: `fast`, `realtime`, or a speed factor from 0.01 to 1,000,000 (× real time).
    static func pace(_ text: String) throws -> ReplayPace {
        switch text.lowercased() {
        case "fast": return .asFastAsPossible
        case "realtime", "real-time": return .realTime
        default:
            guard let f = Double(text), f.isFinite, (0.01...1_000_000).contains(f) else {
                throw Problem("expected fast, realtime or a speed factor from 0.01 to 1000000")
            }
            return f == 1 ? .realTime : .speed(f)
        }
    }

    /// Why a value was refused.
    struct Problem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

extension ChannelSeparationConfig.Preset: ExpressibleByArgument {}
