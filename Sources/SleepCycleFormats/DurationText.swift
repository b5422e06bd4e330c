import Foundation

/// A length of time written the way people write it on a command line: `30m`, `45min`, `1h30m`, `90s`, `2h`,
/// `30d`, `1.5h`, or a bare number in a caller-chosen unit. Used by every option that takes a duration.
public struct DurationText: Sendable, Hashable, CustomStringConvertible {
    public var seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// Units a bare number may mean.
    public enum Unit: Double, Sendable { case seconds = 1, minutes = 60, hours = 3600, days = 86_400 }

    /// Parses `text`: one or more `<number><unit>` parts (units `d`, `h`, `m`/`min`, `s`/`sec` and their long
    /// forms), or a bare number in `bareUnit` (nil: a unit is required). The result must be finite and in `range`.
    public static func parse(_ text: String, bareUnit: Unit? = nil,
                             range: ClosedRange<Double> = 0...(366 * 86_400)) throws(ParseError) -> DurationText {
        let s = text.trimmingCharacters(in: .whitespaces).lowercased()
        let expected = "expected a duration such as 30m, 1h30m, 90s" + (bareUnit == nil ? "" : " or a number")
        let bad = ParseError(description: "'\(MessageText.field(text))' is not a duration (\(expected))")
        var total = 0.0
        let bareNumber = !s.isEmpty && s.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") })
        if let unit = bareUnit, bareNumber, let v = Double(s) {
            total = v * unit.rawValue
        } else if bareNumber, let v = Double(s), v == 0 {
            total = 0   // zero needs no unit
        } else {
            var number = "", sawUnit = false
            var i = s.startIndex
            while i < s.endIndex {
                let ch = s[i]
                if ch.isASCII && (ch.isNumber || ch == ".") { number.append(ch); i = s.index(after: i); continue }
                var unit = ""
                while i < s.endIndex, s[i].isASCII, s[i].isLetter { unit.append(s[i]); i = s.index(after: i) }
                guard let value = Double(number), let scale = Self.unitSeconds[unit] else { throw bad }
                total += value * scale
                number = ""
                sawUnit = true
            }
            guard sawUnit, number.isEmpty else { throw bad }
        }
        guard total.isFinite, range.contains(total) else {
            throw ParseError(description: "duration '\(MessageText.field(text))' is out of range (expected "
                + "\(DurationText(seconds: range.lowerBound)) to \(DurationText(seconds: range.upperBound)))")
        }
        return DurationText(seconds: total)
    }

    private static let unitSeconds: [String: Double] = [
        "d": 86_400, "day": 86_400, "days": 86_400,
        "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
        "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
        "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    ]

    /// Compact: `1h30m`, `45m`, `90s`, `2d`, `0s`.
    public var description: String {
        var rest = Int(seconds.rounded())
        guard rest > 0 else { return seconds > 0 ? "\(seconds)s" : "0s" }
        var out = ""
        for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] where rest >= size {
            out += "\(rest / size)\(unit)"
            rest %= size
        }
        return out
    }
}

/// A 24-hour clock time `H:MM` or `HH:MM` (the smart alarm's `--alarm`), read in a UTC offset that the caller
/// supplies (the recording's).
public struct ClockTime: Sendable, Hashable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Parses `H:MM` / `HH:MM`; nil if malformed or out of range.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let h = Int(parts[0]), let m = Int(parts[1]) else { return nil }
        self.init(hour: h, minute: m)
    }

    public var description: String { pad(Int64(hour), 2) + ":" + pad(Int64(minute), 2) }

    /// The first instant strictly after `date` at which a clock running at `utcOffsetSeconds` shows this time
    /// (fixed offsets have no daylight-saving jumps, so this is plain arithmetic on the local day).
    public func nextOccurrence(after date: Date, utcOffsetSeconds: Int) -> Date {
        let local = date.timeIntervalSince1970 + Double(utcOffsetSeconds)
        var candidate = (local / 86_400).rounded(.down) * 86_400 + Double(hour * 3600 + minute * 60)
        if candidate <= local { candidate += 86_400 }
        return Date(timeIntervalSince1970: candidate - Double(utcOffsetSeconds))
    }

    /// The first instant strictly after `date` at which a clock following a time zone's rules shows this time:
    /// `utcOffset` gives the zone's offset in seconds at an instant (the C library's `localtime_r`). Across a
    /// daylight-saving change in the night the offset at the alarm, not the one at bedtime, decides: 06:45 in Berlin
    /// on 25 October 2026 is 05:45 UTC, not 04:45. A time the clock skips (02:30 when it jumps from 02:00 to 03:00)
    /// is taken an hour later, as `mktime` takes it.
    public func nextOccurrence(after date: Date, utcOffset: (Date) -> Int) -> Date {
        var offset = utcOffset(date)
        var tried: [Date] = []
        for _ in 0..<3 {
            let candidate = nextOccurrence(after: date, utcOffsetSeconds: offset)
            let there = utcOffset(candidate)
            if there == offset { return candidate }
            tried.append(candidate)
            offset = there
        }
        // In a skipped hour the two offsets send each other back and forth: the later instant.
        return tried.max() ?? date
    }
}
